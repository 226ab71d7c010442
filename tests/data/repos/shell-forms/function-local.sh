#!/bin/bash
start() {
  local workers=5
  exec gunicorn --workers "$workers" shop.wsgi
}
start
