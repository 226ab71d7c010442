#!/bin/bash
# The queue worker's image runs its launcher, not part of this repository.
exec ./run-worker.sh --queue default
