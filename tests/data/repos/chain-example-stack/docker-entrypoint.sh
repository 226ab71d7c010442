#!/bin/sh
set -e
jinja2 /app/supervisord.conf.j2 > /app/supervisord.conf
exec "$@"
