#!/bin/sh
WORKERS=4
set -- --workers "$WORKERS" --timeout 40
exec gunicorn "$@" shop.wsgi
