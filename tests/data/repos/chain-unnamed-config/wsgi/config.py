from os import getenv

bind = f"0.0.0.0:{getenv('PORT', '8000')}"
workers = getenv("WEB_CONCURRENCY", 3)
timeout = 30
accesslog = "-"
