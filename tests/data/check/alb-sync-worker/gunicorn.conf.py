# The same ALB in front, keepalive left at its default, but gunicorn's default sync worker: it
# answers every request with `Connection: close`, so no idle connection is left to race.
wsgi_app = "conbench:application"
bind = "0.0.0.0:5000"
workers = 4
