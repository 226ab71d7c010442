#!/bin/sh
CMD="gunicorn --workers 3 --threads 2 shop.wsgi"
exec $CMD
