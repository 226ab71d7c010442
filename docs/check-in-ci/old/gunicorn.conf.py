bind = "127.0.0.1:8000"
workers = 2
worker_class = "gthread"
threads = 1
