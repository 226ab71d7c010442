#!/bin/bash
set -e
exec $(command -v uwsgi) --ini /srv/uwsgi.ini
