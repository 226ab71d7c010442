#!/bin/sh
exec gunicorn -w 3 shop.wsgi
