#!/bin/bash
UWSGI_OPTS="--plugins http,python \
            --socket /tmp/uwsgi.sock \
            --module wsgi:application \
            --http 0.0.0.0:5000 \
            -p 2 -L -b 32768 --vacuum \
            --harakiri $UWSGI_HARAKIRI"
if true; then
    sudo -u ckan -EH uwsgi $UWSGI_OPTS
fi
