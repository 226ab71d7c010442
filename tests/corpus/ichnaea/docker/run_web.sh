#!/bin/bash
# Ichnaea's web container: gunicorn with the project's own gevent worker, settings from the
# environment with defaults, and a Python module as the gunicorn config (`python:`).
set -e

GUNICORN_PORT=${GUNICORN_PORT:-"8000"}
# one worker per CPU
GUNICORN_WORKERS=${GUNICORN_WORKERS:-"1"}
GUNICORN_WORKER_CLASS=${GUNICORN_WORKER_CLASS:-"ichnaea.webapp.worker.LocationGeventWorker"}
# greenlets per worker
GUNICORN_WORKER_CONNECTIONS=${GUNICORN_WORKER_CONNECTIONS:-"4"}
GUNICORN_MAX_REQUESTS=${GUNICORN_MAX_REQUESTS:-"10000"}
# jitter against a stampede of retiring workers
GUNICORN_MAX_REQUESTS_JITTER=${GUNICORN_MAX_REQUESTS_JITTER:-"1000"}
GUNICORN_TIMEOUT=${GUNICORN_TIMEOUT:-"60"}

LOCAL_DEV_ENV=${LOCAL_DEV_ENV:-"False"}

python /app/ichnaea/webapp/app.py --check

if [ "${LOCAL_DEV_ENV}" == "True" ]; then
    cd /app/ && python ichnaea/webapp/app.py
else
    set -x
    gunicorn \
        --pythonpath /app \
        --workers="${GUNICORN_WORKERS}" \
        --worker-class="${GUNICORN_WORKER_CLASS}" \
        --worker-connections="${GUNICORN_WORKER_CONNECTIONS}" \
        --max-requests="${GUNICORN_MAX_REQUESTS}" \
        --max-requests-jitter="${GUNICORN_MAX_REQUESTS_JITTER}" \
        --capture-output \
        --error-logfile=- \
        --access-logfile=- \
        --log-file=- \
        --timeout="${GUNICORN_TIMEOUT}" \
        --config=python:ichnaea.webapp.gunicorn_settings \
        --bind 0.0.0.0:"${GUNICORN_PORT}" \
        ichnaea.webapp.app:wsgi_app
fi
