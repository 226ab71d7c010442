# uvicorn's worker takes its keep-alive timeout from gunicorn's `keepalive`:
# 5 s is uvicorn's own default (--timeout-keep-alive).
wsgi_app = "app.main:app"
bind = "0.0.0.0:8080"
workers = 2
worker_class = "uvicorn.workers.UvicornWorker"
keepalive = 5
