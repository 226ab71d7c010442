#!/bin/bash
ARGS=(gunicorn --workers "$WEB_CONCURRENCY" shop.wsgi)
exec "${ARGS[@]}"
