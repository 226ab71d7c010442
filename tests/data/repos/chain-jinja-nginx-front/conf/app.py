bind = "unix:/tmp/ledger.sock"
workers = 2
timeout = 120
graceful_timeout = 120
