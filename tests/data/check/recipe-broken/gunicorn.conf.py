wsgi_app = "app:app"
bind = "127.0.0.1:8001"
workers = 1
worker_class = "gthread"
threads = 4
