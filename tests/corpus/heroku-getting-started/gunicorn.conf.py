# gunicorn settings for the getting-started app on Heroku. The Python buildpack also sets a few
# settings through GUNICORN_CMD_ARGS, which win over this file.

import os

# Heroku's router connects to $PORT; bind to IPv6 (IPv4 still works) so IPv6-only spaces work.
bind = ["[::]:{}".format(os.environ.get("PORT", 5006))]

# Threads suit the blocking I/O of a typical Django view better than the sync worker.
worker_class = "gthread"

# The buildpack sets WEB_CONCURRENCY at dyno boot from the dyno's CPUs and memory.
workers = os.environ.get("WEB_CONCURRENCY", 1)

threads = 5

# a worker silent this long is killed (the request limit only for the sync worker)
timeout = 20

# below the dyno manager's 30 s shutdown limit
graceful_timeout = 20

# above the router's 90 s idle timeout, so the router closes idle connections first
keepalive = 100

accesslog = "-"
access_log_format = 'gunicorn method=%(m)s path="%(U)s" status=%(s)s duration=%(M)sms request_id=%({x-request-id}i)s'

if os.environ.get("ENVIRONMENT") == "development":
    reload = True
else:
    preload_app = True
    reuse_port = True
    forwarded_allow_ips = "*"
