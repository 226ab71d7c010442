#!/bin/sh
set -e
SUPERVISORD_CONF="/srv/etc/supervisord.conf"
exec /usr/local/bin/supervisord -c "$SUPERVISORD_CONF"
