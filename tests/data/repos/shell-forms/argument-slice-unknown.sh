#!/bin/bash
# The caller's arguments from the second on: known only where it runs.
exec gunicorn --workers 2 shop.wsgi "${@:2}"
