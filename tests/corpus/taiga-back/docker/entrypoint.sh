#!/usr/bin/env bash
# taiga-back's image entrypoint: migrations, then the API under gunicorn as the taiga user.
set -euo pipefail

python manage.py migrate
python manage.py loaddata initial_project_templates
chown -R taiga:taiga /taiga-back

exec gosu taiga gunicorn taiga.wsgi:application \
    --name taiga_api \
    --bind 0.0.0.0:8000 \
    --workers 3 \
    --worker-tmp-dir /dev/shm \
    --log-level=info \
    --access-logfile - \
    "$@"
