#!/bin/sh
set -e
mkdir -p /run/shop
supervisord -c /srv/etc/supervisord.conf
