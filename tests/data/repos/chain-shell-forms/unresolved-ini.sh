#!/bin/sh
exec uwsgi --ini ${SRC_DIR}/docker/uwsgi.ini
