bind = "127.0.0.1:9000"
workers = 8
keepalive = 75
