import os

bind = "0.0.0.0:8000"
workers = 2
# A config that also mentions uvicorn's worker still configures gunicorn.
worker_class = "uvicorn.workers.UvicornWorker"
if os.environ.get("DEBUG"):
    os.system("echo gunicorn starting")
