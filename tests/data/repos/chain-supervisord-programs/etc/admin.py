bind = "unix:/run/shop/admin.sock"
workers = 1
timeout = 120
