# The numbers come from the environment (GUNICORN_CMD_ARGS in expected.json), as in a compose file.
wsgi_app = "openlibrary.asgi_app:app"
bind = "0.0.0.0:8080"
