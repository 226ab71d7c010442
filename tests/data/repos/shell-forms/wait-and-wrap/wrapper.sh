#!/bin/bash
COLOR=$1
PREFIX=$2
shift 2
exec "$@"
