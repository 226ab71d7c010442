# The compose file's command line, `--bind 0.0.0.0:8000`, written as a config file.
wsgi_app = "hello_django.wsgi:application"
bind = "0.0.0.0:8000"
