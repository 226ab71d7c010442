# Worker count from the CPU count, overridable from the environment, as the image does.
import multiprocessing
import os

workers_per_core = float(os.getenv("WORKERS_PER_CORE", "1"))
web_concurrency_env = os.getenv("WEB_CONCURRENCY")
cores = multiprocessing.cpu_count()
default_web_concurrency = max(int(workers_per_core * cores), 2)
host = os.getenv("HOST", "0.0.0.0")
port = os.getenv("PORT", "80")

loglevel = os.getenv("LOG_LEVEL", "info")
bind = os.getenv("BIND", f"{host}:{port}")
workers = int(web_concurrency_env) if web_concurrency_env else default_web_concurrency
graceful_timeout = int(os.getenv("GRACEFUL_TIMEOUT", "120"))
timeout = int(os.getenv("TIMEOUT", "120"))
keepalive = int(os.getenv("KEEP_ALIVE", "5"))
