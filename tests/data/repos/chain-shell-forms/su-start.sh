#!/bin/sh
exec su app -c "exec gunicorn app.wsgi:application --bind 0.0.0.0:8300 --workers 2"
