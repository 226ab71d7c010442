# Three sync workers on the unix socket nginx's upstream names.
wsgi_app = "myapp:app"
bind = "unix:/tmp/gunicorn.sock"
workers = 3
