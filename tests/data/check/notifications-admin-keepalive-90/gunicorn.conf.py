# keepalive set above the ALB's 60 s idle timeout.
import os

bind = "0.0.0.0:{}".format(os.getenv("PORT", "6012"))
workers = 4
worker_class = "gthread"
threads = 2
keepalive = 90
accesslog = "-"
