"""The bundled scenarios: one module each, registered here by the name `servertune bench` takes.

Adding a scenario is one module implementing `servertune.bench.harness.scenario.Scenario` and
one line below. Entries are "module:Class" strings, imported only when that scenario is asked
for, so `servertune bench --list` and every other command stay cheap.
"""

from __future__ import annotations

__all__ = ["SCENARIOS"]

SCENARIOS: dict[str, str] = {
    "app": "servertune.bench.scenarios.app:AppBench",
    "asgi": "servertune.bench.scenarios.asgi:AsgiServers",
    "async-clients": "servertune.bench.scenarios.async_clients:AsyncClients",
    "aws": "servertune.bench.scenarios.aws:Aws",
    "balance": "servertune.bench.scenarios.balance:Balance",
    "check-speed": "servertune.bench.scenarios.check_speed:CheckSpeed",
    "cold-start": "servertune.bench.scenarios.cold_start:ColdStart",
    "granian-threads": "servertune.bench.scenarios.granian_threads:GranianThreads",
    "hol": "servertune.bench.scenarios.hol:HeadOfLine",
    "hosts": "servertune.bench.scenarios.hosts:Hosts",
    "idle-race": "servertune.bench.scenarios.idle_race:IdleRace",
    "keepalive-chain": "servertune.bench.scenarios.keepalive_chain:KeepaliveChain",
    "log-read": "servertune.bench.scenarios.log_read:LogRead",
    "method-cache": "servertune.bench.scenarios.method_cache:MethodCache",
    "parallel": "servertune.bench.scenarios.parallel:Parallel",
    "resize": "servertune.bench.scenarios.resize:Resize",
    "restart": "servertune.bench.scenarios.restart:Restart",
    "ssl-context": "servertune.bench.scenarios.ssl_context:SslContext",
    "sync-to-async": "servertune.bench.scenarios.sync_to_async:SyncToAsync",
}
