# keepalive raised to exactly the load balancer's idle timeout (120 s).
import os

bind = "0.0.0.0:8000"
workers = int(os.environ.get("GUNICORN_WORKERS", "2"))
worker_class = "gthread"
threads = 4
keepalive = 120
