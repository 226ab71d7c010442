import multiprocessing

workers = multiprocessing.cpu_count() * 2 + 1
threads = 4
max_requests = 1000
max_requests_jitter = 10
