accesslog = "-"
loglevel = "info"
