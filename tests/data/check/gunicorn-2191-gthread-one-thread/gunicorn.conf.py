# Four gthread workers with one thread each, as in the command line
# (`gunicorn --workers 4 --threads 1 --worker-class gthread app:app`).
wsgi_app = "app:app"
bind = "127.0.0.1:8000"
workers = 4
threads = 1
worker_class = "gthread"
