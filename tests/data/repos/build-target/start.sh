#!/bin/sh
exec gunicorn --workers 3 shop.wsgi
