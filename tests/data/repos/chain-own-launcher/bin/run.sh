#!/bin/sh
set -e
shop collectstatic --noinput
shop runserver 0.0.0.0:8000
