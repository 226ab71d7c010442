#!/bin/bash
exec gunicorn shop.wsgi:application \
    --bind 0.0.0.0:${PORT:-8000} \
    --workers ${WEB_WORKERS:-3} \
    --timeout 60
