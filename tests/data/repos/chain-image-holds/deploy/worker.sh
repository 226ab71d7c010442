#!/bin/sh
exec uwsgi --ini etc/app.ini
