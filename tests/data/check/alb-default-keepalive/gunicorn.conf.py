# gunicorn straight behind an AWS ALB, keepalive left at gunicorn's default, with a worker that
# keeps idle connections open (conbench had left the sync worker, conbench/conbench#1018).
wsgi_app = "conbench:application"
bind = "0.0.0.0:5000"
workers = 4
worker_class = "gthread"
threads = 4
