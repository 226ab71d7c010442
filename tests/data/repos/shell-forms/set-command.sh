#!/bin/sh
# The command is the positional parameters, set by the script itself.
set -- gunicorn --workers 3 shop.wsgi
exec "$@"
