#!/bin/sh
set -e
mkdir -p /etc/uwsgi
j2 /app/conf/app.ini.j2 > /etc/uwsgi/app.ini
j2 --undefined /app/conf/extra.ini.j2 -o /etc/uwsgi/extra.ini
exec uwsgi --ini /etc/uwsgi/app.ini
