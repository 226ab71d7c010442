#!/bin/sh
set -e
python manage.py migrate --noinput
gunicorn -c /app/config/gunicorn.conf.py myapp.wsgi:application
