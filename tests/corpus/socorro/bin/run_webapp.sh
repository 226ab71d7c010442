#!/bin/bash
# Socorro's crash-stats webapp: gunicorn, every setting from the environment with a default;
# `--dev` runs Django's dev server instead. Run inside the app's container.
set -euxo pipefail

PORT=${PORT:-"8000"}
GUNICORN_WORKERS=${GUNICORN_WORKERS:-"1"}
GUNICORN_WORKER_CLASS=${GUNICORN_WORKER_CLASS:-"sync"}
GUNICORN_MAX_REQUESTS=${GUNICORN_MAX_REQUESTS:-"10000"}
GUNICORN_MAX_REQUESTS_JITTER=${GUNICORN_MAX_REQUESTS_JITTER:-"1000"}
CMDPREFIX="${CMDPREFIX:-}"

if [ "${1:-}" == "--dev" ]; then
    cd /app/webapp/ && ${CMDPREFIX} python manage.py runserver 0.0.0.0:8000
else
    ${CMDPREFIX} gunicorn \
        --pythonpath /app/webapp/ \
        --workers="${GUNICORN_WORKERS}" \
        --worker-class="${GUNICORN_WORKER_CLASS}" \
        --max-requests="${GUNICORN_MAX_REQUESTS}" \
        --max-requests-jitter="${GUNICORN_MAX_REQUESTS_JITTER}" \
        --error-logfile=- \
        --access-logfile=- \
        --log-file=- \
        --config=/app/docker/config/gunicorn_config.py \
        --bind 0.0.0.0:"${PORT}" \
        crashstats.wsgi:application
fi
