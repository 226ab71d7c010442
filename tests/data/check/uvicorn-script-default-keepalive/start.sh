#!/bin/sh
# A container entrypoint: uvicorn's own process manager, keep-alive left at uvicorn's 5 s.
set -e
exec uvicorn app.main:app \
    --host 0.0.0.0 --port 8080 \
    --workers 8 \
    --proxy-headers --forwarded-allow-ips '*'
