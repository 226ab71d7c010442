#!/usr/bin/env bash
set -e
export GUNICORN_KEEP_ALIVE_TIMEOUT=${GUNICORN_KEEP_ALIVE_TIMEOUT:-5}
prefix=""
(set -x; exec $prefix gunicorn -b 0.0.0.0:7002 --workers=3 app:app --keep-alive ${GUNICORN_KEEP_ALIVE_TIMEOUT})
