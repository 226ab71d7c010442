#!/bin/bash
# The image's entrypoint: prepare the data directories and config file, then run CMD.
set -e

if [[ ! -d "$INVENTREE_STATIC_ROOT" ]]; then
    mkdir -p $INVENTREE_STATIC_ROOT
fi

if test -f "$INVENTREE_CONFIG_FILE"; then
    echo "Loading config file : $INVENTREE_CONFIG_FILE"
else
    cp $INVENTREE_BACKEND_DIR/InvenTree/config_template.yaml $INVENTREE_CONFIG_FILE
fi

cd ${INVENTREE_HOME}

# the CMD runs after the entrypoint is done
exec "$@"
