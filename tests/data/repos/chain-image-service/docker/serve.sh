#!/bin/sh
exec gunicorn --bind 0.0.0.0:8080 --workers 2 --timeout 90 app.wsgi
