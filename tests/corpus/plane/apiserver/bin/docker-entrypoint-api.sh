#!/bin/bash
# Plane's API container: wait for the database and migrations, register the instance, then
# gunicorn with uvicorn's ASGI worker; the worker count comes from the container's environment.
set -e
python manage.py wait_for_db
python manage.py wait_for_migrations

HOSTNAME=$(hostname)
SIGNATURE=$(echo "$HOSTNAME" | sha256sum | awk '{print $1}')
export MACHINE_SIGNATURE=$SIGNATURE
python manage.py register_instance "$MACHINE_SIGNATURE"
python manage.py configure_instance
python manage.py clear_cache

exec gunicorn -w "$GUNICORN_WORKERS" -k uvicorn.workers.UvicornWorker plane.asgi:application --bind "${BIND_HOST:-[::]}":"${PORT:-8000}" --max-requests 1200 --max-requests-jitter 1000 --access-logfile -
