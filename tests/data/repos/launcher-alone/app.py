"""The shop's application: what a server serves, starting nothing (its docstring names gunicorn)."""

from flask import Flask

app = Flask(__name__)


@app.route("/")
def index() -> str:
    return "ok"
