#!/usr/bin/env python3
"""Starts the shop's gunicorn with the threads the environment asks for."""

import os

cmdline = [
    "gunicorn",
    "--threads",
    os.environ.get("WEB_THREADS", "4"),
    "--workers",
    "3",
    "-b",
    "0.0.0.0:8080",
    "--timeout",
    "120",
]
cmdline.append("'shop:create_app()'")

os.system(" ".join(cmdline))
