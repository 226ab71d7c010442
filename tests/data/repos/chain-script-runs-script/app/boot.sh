#!/bin/bash
# Migrations first, then the web server: both are scripts beside this one.
if [[ "$SKIP_CHECKS" != "1" ]]; then
  ./checks.sh && exec ./serve.sh
else
  exec ./serve.sh
fi
