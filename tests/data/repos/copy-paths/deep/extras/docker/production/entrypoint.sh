#!/bin/sh
gunicorn -w 3 shop.wsgi
