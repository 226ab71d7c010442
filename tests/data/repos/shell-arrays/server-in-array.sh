#!/bin/bash
PORT="${PORT:-9000}"
declare -a SERVER=(uvicorn shop.asgi:app --host 0.0.0.0 --port "$PORT")
SERVER+=(--workers 2)
exec "${SERVER[@]}" --timeout-keep-alive 20
