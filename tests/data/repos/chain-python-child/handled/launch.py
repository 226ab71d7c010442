"""Start gunicorn as a child and pass SIGTERM on to it."""

import signal
import subprocess

server = subprocess.Popen(["gunicorn", "--workers", "2", "--bind", "0.0.0.0:8000", "shop.wsgi"])
signal.signal(signal.SIGTERM, lambda number, frame: server.send_signal(number))
server.wait()
