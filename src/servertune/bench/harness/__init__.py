"""What every benchmark shares, one concept per module.

ports (free loopback ports, what listens), supervision (the `Stack`: process groups started and
always stopped), deployments (app server + nginx rendered from a plan), load (`LoadResult` and a
closed loop), wrk (the wrk adapter), client (the built-in HTTP client), stats (percentiles,
medians, CPU time from /proc), report (the JSON contract), progress (stderr), plotting and
waterfall (PNG), versions, tls (a throwaway PKI), loopback (a keep-alive test server), moto
(a local S3 server), scenario (the `Scenario` protocol) and runner (`run_scenario()`).
"""
