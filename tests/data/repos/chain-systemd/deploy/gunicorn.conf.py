bind = "127.0.0.1:8001"
workers = 3
timeout = 120
