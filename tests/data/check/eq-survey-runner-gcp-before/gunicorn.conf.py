# Behind Google Cloud's HTTP(S) load balancer, keepalive not set (gunicorn's default).
bind = "0.0.0.0:5000"
workers = 4
worker_class = "gthread"
threads = 4
timeout = 30
