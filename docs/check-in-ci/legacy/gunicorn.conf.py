bind = "127.0.0.1:9000"
worker_class = "gthread"
threads = 1
keepalive = 75
