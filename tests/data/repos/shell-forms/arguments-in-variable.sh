#!/usr/bin/env bash
readonly cmd="$*"
echo "Service is up: $cmd"
exec $cmd
