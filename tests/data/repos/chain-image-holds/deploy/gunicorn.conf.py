bind = "0.0.0.0:8000"
workers = 3
graceful_timeout = 30
