#!/bin/bash
# The server's binary is what a function prints: either arm names gunicorn.
select_gunicorn() {
  if [[ "${NO_VENV}" = true ]]; then
    echo "gunicorn"
  else
    echo "${BASE_DIR}/venv/bin/gunicorn"
  fi
}

run() {
  local gunicorn_bin
  gunicorn_bin=$(select_gunicorn)
  exec "$gunicorn_bin" app.wsgi --workers 3 --threads 2
}

run
