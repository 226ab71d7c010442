bind = "unix:/run/shop/web.sock"
workers = 3
timeout = 60
