#!/bin/sh
set -e
# conf/boot/render.py (in the image's base layer) writes supervisord.conf from its .j2
exec supervisord -c "$APPCONF/supervisord.conf"
