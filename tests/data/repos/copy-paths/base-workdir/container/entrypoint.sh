#!/bin/sh
exec /usr/local/searxng/.venv/bin/granian --interface wsgi --port "$GRANIAN_PORT" searx.webapp:app
