bind = "127.0.0.1:8000"
workers = 2
threads = 4
timeout = 120
keepalive = 75
max_requests = 1000
max_requests_jitter = 20  # servertune: ignore[max-requests-jitter-small] two workers: a restart leaves one
