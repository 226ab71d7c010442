#!/bin/sh
set -e
# the image's render step writes each *.jnj / *.j2 under $APPCONF beside itself
exec supervisord -c "$APPCONF/supervisord.conf"
