#!/bin/sh
# One single-worker uvicorn per socket, each under its own supervisor unit.
case "${SERVERTUNE_WORKER:-}" in
    0) set -- --uds /run/app/w0.sock ;;
    1) set -- --uds /run/app/w1.sock ;;
    2) set -- --uds /run/app/w2.sock ;;
    3) set -- --uds /run/app/w3.sock ;;
    *) echo "SERVERTUNE_WORKER must be 0 .. 3" >&2; exit 2 ;;
esac
exec uvicorn 'app.main:app' "$@" \
    --workers 1 \
    --backlog 128 \
    --timeout-keep-alive 65 \
    --timeout-graceful-shutdown 30 \
    --no-access-log
