#!/bin/sh
case "$1" in
  web) exec gunicorn --workers 3 shop.wsgi ;;
  worker) exec celery -A shop worker ;;
esac
