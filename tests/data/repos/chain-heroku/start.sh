#!/bin/bash
python manage.py migrate
gunicorn shop.wsgi:application --timeout 120 --log-file -
