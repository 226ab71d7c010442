#!/bin/sh
exec gunicorn --bind unix:/tmp/web.sock --workers 2 app.wsgi
