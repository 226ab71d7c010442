wsgi_app = "servertune.bench.scenarios.keepalive_chain:app"
bind = "127.0.0.1:8001"
workers = 1
worker_class = "uvicorn.workers.UvicornWorker"
