#!/bin/bash
set -e

# function db_ready(){
# python << END
# import sys
# sys.exit(0)
# END
# }

python manage.py migrate --noinput
exec $@
