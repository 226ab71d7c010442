# gunicorn straight behind an AWS ALB, keepalive left at gunicorn's default.
wsgi_app = "conbench:application"
bind = "0.0.0.0:5000"
workers = 4
