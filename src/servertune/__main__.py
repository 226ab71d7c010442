"""`python -m servertune` runs the CLI."""

from servertune.cli import main

main()
