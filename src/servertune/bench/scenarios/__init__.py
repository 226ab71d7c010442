"""One module per `servertune bench` scenario (see servertune.bench)."""
