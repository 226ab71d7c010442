bind = "0.0.0.0:8400"
workers = 7
