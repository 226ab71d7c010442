#!/bin/sh
# The caller's arguments inside a longer command string, run by eval.
cmd="exec gunicorn shop.wsgi --workers 3 \
     $@"
eval "$cmd"
