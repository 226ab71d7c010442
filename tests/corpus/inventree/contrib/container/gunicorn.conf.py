"""gunicorn settings of the InvenTree image."""

import multiprocessing
import os

accesslog = "-"
errorlog = "-"
loglevel = os.environ.get("INVENTREE_LOG_LEVEL", "warning").lower()
capture_output = True

worker_tmp_dir = "/dev/shm"
threads = 4

# the worker timeout, 90 s unless the environment says otherwise
timeout = os.environ.get("INVENTREE_GUNICORN_TIMEOUT", 90)

# worker processes: from the environment, else from the CPU count
workers = os.environ.get("INVENTREE_GUNICORN_WORKERS", None)

if workers is not None:
    try:
        workers = int(workers)
    except ValueError:
        workers = None

if workers is None:
    workers = multiprocessing.cpu_count() * 2 + 1

max_requests = 1000
max_requests_jitter = 50

# the app is loaded once, before the workers fork
preload_app = True
