#!/bin/sh
if [ -n "$READY" ]; then exec gunicorn --workers 2 shop.wsgi; fi
