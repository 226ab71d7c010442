#!/bin/bash
has_web() {
    local service=${SERVICE:-}
    [[ -z $service || $service == "web" ]]
}
if [[ -n ${OFFSET:-} && $OFFSET != 0 ]]; then
    echo offset
fi
exec gunicorn --workers 2 shop.wsgi
