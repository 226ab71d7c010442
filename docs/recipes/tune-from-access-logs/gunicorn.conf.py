# The app server as deployed: a thread per worker, two workers.
bind = "127.0.0.1:8000"
workers = 2
threads = 1
timeout = 30
