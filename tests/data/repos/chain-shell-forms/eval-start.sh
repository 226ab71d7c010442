#!/bin/sh
set -e
PORT=8100
cmd="exec gunicorn app.wsgi:application -b 0.0.0.0:$PORT --workers 5"
if [ "${PUID:-0}" != "0" ]; then
    cmd="su app -c '$cmd'"
fi
eval "$cmd"
