#!/bin/sh
exec gunicorn -c python:conf.gunicorn_web app.wsgi
