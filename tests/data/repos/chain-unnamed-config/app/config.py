DEBUG = False
timeout = 5  # the app's own HTTP client timeout
CACHE_URL = "redis://cache:6379/0"
