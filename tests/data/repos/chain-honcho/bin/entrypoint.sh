#!/bin/bash
set -eo pipefail
case "$1" in
  web)
    exec honcho -f /app/Procfile --no-prefix start
    ;;
  *)
    exec "$@"
    ;;
esac
