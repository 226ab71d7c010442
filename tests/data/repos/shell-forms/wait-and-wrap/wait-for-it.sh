#!/bin/bash
WAITFORIT_cmdname=${0##*/}
while [[ $# -gt 0 ]]
do
    case "$1" in
        --)
        shift
        WAITFORIT_CLI=("$@")
        break
        ;;
        *)
        shift
        ;;
    esac
done
if [[ $WAITFORIT_CLI != "" ]]; then
    exec "${WAITFORIT_CLI[@]}"
fi
