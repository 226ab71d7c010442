"""A generated nginx access log with a known arrival pattern, for `bench app --replay`.

log_format replay '$msec $remote_addr "$request" $status $body_bytes_sent $request_time';
120 s: Poisson background at 40 req/s, plus every 2 s a burst of 30 requests within 100 ms
(mean 55 req/s); routes /items/<n> 70 %, /io 25 % (~50 ms), /report 5 % (~300 ms).
Lines are written in order of completion (arrival + request_time), as nginx does.
"""

import random
import sys

rng = random.Random(46)
T0 = 1_795_698_000.0
SECONDS = 120
arrivals = []
t = 0.0
while True:
    t += rng.expovariate(40.0)
    if t >= SECONDS:
        break
    arrivals.append(t)
for start in range(0, SECONDS, 2):
    arrivals += [start + 0.5 + rng.uniform(0, 0.1) for _ in range(30)]
lines = []
for at in arrivals:
    r = rng.random()
    if r < 0.70:
        path, took = f"/items/{rng.randrange(1, 5000)}", rng.uniform(0.001, 0.004)
    elif r < 0.95:
        path, took = "/io", 0.05 + rng.expovariate(1 / 0.005)
    else:
        path, took = "/report", 0.3 + rng.expovariate(1 / 0.02)
    done = T0 + at + took
    lines.append((done, f'{T0 + at:.3f} 10.0.0.{rng.randrange(1, 250)} "GET {path} HTTP/1.1" 200 64 {took:.3f}\n'))
lines.sort()
sys.stdout.write("".join(text for _, text in lines))
