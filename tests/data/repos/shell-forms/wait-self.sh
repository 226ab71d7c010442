#!/bin/bash
wait_for() {
  timeout "$TIMEOUT" "$0" --quiet --child --host="$HOST" --port="$PORT" --timeout="$TIMEOUT" &
  wait $!
}
wait_for
