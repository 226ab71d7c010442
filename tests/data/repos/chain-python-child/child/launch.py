"""Migrate, then start gunicorn as a child: Python stays PID 1."""

import subprocess

subprocess.run(["flask", "db", "upgrade"], check=True)
command = ["gunicorn", "--workers", "2", "--bind", "0.0.0.0:8000", "shop.wsgi"]
subprocess.run(command, check=True)
