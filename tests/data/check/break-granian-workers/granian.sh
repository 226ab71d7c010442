#!/bin/sh
exec granian --interface asgi app:app \
    --host 127.0.0.1 --port 8001 \
    --workers 8 \
    --backlog 8192
