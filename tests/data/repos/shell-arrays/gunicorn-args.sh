#!/bin/bash
set -e
WORKERS=3
GUNICORN_ARGS=(
  --bind "0.0.0.0:8000"   # the port the nginx in front passes to
  --workers "$WORKERS"
  --access-logformat '%(h)s "%(r)s" %(s)s'
)
if [ "$PRELOAD" = "1" ]; then
  GUNICORN_ARGS+=(--preload)
fi
GUNICORN_ARGS+=(--timeout 45)
exec gunicorn "${GUNICORN_ARGS[@]}" shop.wsgi:application
