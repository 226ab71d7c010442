#!/bin/sh
exec gunicorn --workers 3 --bind 0.0.0.0:8000 shop.wsgi
