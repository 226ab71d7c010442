#!/bin/bash
# A function defined first and called last: its body runs at the call.
start_web() {
  local workers=4
  gunicorn --workers "$workers" shop.wsgi
}
migrate() { python manage.py migrate; }
migrate
start_web
