# NetBox's example gunicorn config: the WSGI process behind nginx on the same host.
bind = "127.0.0.1:8001"

# usually 2n+1, n the CPU cores
workers = 5

threads = 3

# seconds a request may take
timeout = 120

# respawn a worker after this many requests
max_requests = 5000
max_requests_jitter = 500
