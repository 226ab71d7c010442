bind = "unix:/run/shop/api.sock"
workers = 2
timeout = 30
