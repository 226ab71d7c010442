#!/usr/bin/env python3
"""Prepare the database, then hand over to gunicorn."""

import logging
import os

os.system("flask db upgrade")

cmdline = [
    "gunicorn",
    "--threads",
    os.environ.get("WEB_THREADS", "1"),
    "-b",
    f"{'[::]' if os.environ.get('LISTEN_V6') else '0.0.0.0'}:8080",
    "--timeout 120",
]

if logging.root.level <= logging.INFO:
    cmdline.extend(["--access-logfile", "-"])

cmdline.append("'shop:create_app()'")

os.system(" ".join(cmdline))
