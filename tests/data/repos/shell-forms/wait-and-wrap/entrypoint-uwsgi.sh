#!/bin/sh
exec uwsgi --processes 4 --http :8000 --module shop.wsgi --die-on-term
