# The fix: keepalive configurable, set above the load balancer's 600 s.
import os

bind = "0.0.0.0:5000"
workers = 4
worker_class = "gthread"
threads = 4
timeout = 30
keepalive = int(os.getenv("GUNICORN_KEEP_ALIVE", "650"))
