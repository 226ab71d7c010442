import os

bind = "127.0.0.1:8001"
workers = int(os.environ.get("SHOP_WORKERS", 2))
timeout = 120
