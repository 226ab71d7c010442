"""The shop's own command: its web server is built here, in code."""

from shop.server import make_server


def main() -> None:
    make_server().serve_forever()
