#!/bin/bash
# The Dify API image's entrypoint: one image, a mode per container (migration, Celery worker,
# beat, job, or the API server under gunicorn with gevent workers).
set -e

export LANG=${LANG:-en_US.UTF-8}

if [[ "${MIGRATION_ENABLED}" == "true" ]]; then
  flask upgrade-db
fi

if [[ "${MODE}" == "worker" ]]; then
  WORKER_POOL="${CELERY_WORKER_POOL:-${CELERY_WORKER_CLASS:-gevent}}"
  exec celery -A celery_entrypoint.celery worker -P ${WORKER_POOL} -c ${CELERY_WORKER_AMOUNT:-1} \
    --max-tasks-per-child ${MAX_TASKS_PER_CHILD:-50} --loglevel ${LOG_LEVEL:-INFO}

elif [[ "${MODE}" == "beat" ]]; then
  exec celery -A app.celery beat --loglevel ${LOG_LEVEL:-INFO}

else
  if [[ "${DEBUG}" == "true" ]]; then
    exec flask run --host=${DIFY_BIND_ADDRESS:-0.0.0.0} --port=${DIFY_PORT:-5001} --debug
  else
    exec gunicorn \
      --bind "${DIFY_BIND_ADDRESS:-0.0.0.0}:${DIFY_PORT:-5001}" \
      --workers ${SERVER_WORKER_AMOUNT:-1} \
      --worker-class ${SERVER_WORKER_CLASS:-gevent} \
      --worker-connections ${SERVER_WORKER_CONNECTIONS:-10} \
      --timeout ${GUNICORN_TIMEOUT:-200} \
      app:app
  fi
fi
