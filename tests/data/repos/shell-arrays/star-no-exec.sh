#!/bin/sh
OPTS=(--workers 5 --threads 2)
gunicorn ${OPTS[*]} shop.wsgi
