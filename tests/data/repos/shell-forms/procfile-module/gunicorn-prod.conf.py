workers = 5
