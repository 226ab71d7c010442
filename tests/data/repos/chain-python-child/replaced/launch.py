"""Migrate, then hand the process over to gunicorn."""

import os
import subprocess

subprocess.run(["flask", "db", "upgrade"], check=True)
command = ["gunicorn", "--workers", "2", "--bind", "0.0.0.0:8000", "shop.wsgi"]
os.execvp(command[0], command)
