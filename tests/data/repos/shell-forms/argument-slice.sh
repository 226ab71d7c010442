#!/bin/bash
set -- web --workers 4
exec gunicorn shop.wsgi "${@:2}"
