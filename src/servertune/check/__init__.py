"""`servertune check`: audit existing gunicorn, uWSGI, uvicorn, granian, nginx and HAProxy configs across layers.

Each file is read by the parser its own ecosystem trusts (gunicorn's loader in a child
interpreter, crossplane for nginx, uWSGI's ini rules, uvicorn's and granian's own command-line
parsers for the shell scripts that start them, HAProxy's documented grammar for haproxy.cfg),
the files are linked into the chain
client -> load balancer -> nginx -> app server, and the rules in `servertune.check.rules` run
on the result. docs/check.md says which parser reads what, and why.

The package loads lazily: `import servertune.check.balancers` (the CLI does, for its options)
does not load the readers and rules; each name below is imported from its module on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from servertune.check.audit import (
        CheckResult,
        check_files,
        config_kind,
        plan_for_check,
        read_config,
        read_file,
    )
    from servertune.check.balancers import LOAD_BALANCERS, LoadBalancer
    from servertune.check.chain import BalancerLink, Link
    from servertune.check.model import (
        AppServer,
        Balancer,
        CheckInputError,
        Finding,
        Location,
        NginxConfig,
        NothingToCheck,
        Severity,
    )
    from servertune.check.readers import READERS, Reader, Reading
    from servertune.check.rules import RULES, Rule

__all__ = [
    "LOAD_BALANCERS",
    "READERS",
    "RULES",
    "AppServer",
    "Balancer",
    "BalancerLink",
    "CheckInputError",
    "CheckResult",
    "Finding",
    "Link",
    "LoadBalancer",
    "Location",
    "NginxConfig",
    "NothingToCheck",
    "Reader",
    "Reading",
    "Rule",
    "Severity",
    "check_files",
    "config_kind",
    "plan_for_check",
    "read_config",
    "read_file",
]

#: Where each public name lives; the module is imported the first time the name is asked for.
_HOMES = {
    "LOAD_BALANCERS": "servertune.check.balancers",
    "READERS": "servertune.check.readers",
    "RULES": "servertune.check.rules",
    "AppServer": "servertune.check.model",
    "Balancer": "servertune.check.model",
    "BalancerLink": "servertune.check.chain",
    "CheckInputError": "servertune.check.model",
    "CheckResult": "servertune.check.audit",
    "Finding": "servertune.check.model",
    "Link": "servertune.check.chain",
    "LoadBalancer": "servertune.check.balancers",
    "Location": "servertune.check.model",
    "NginxConfig": "servertune.check.model",
    "NothingToCheck": "servertune.check.model",
    "Reader": "servertune.check.readers",
    "Reading": "servertune.check.readers",
    "Rule": "servertune.check.rules",
    "Severity": "servertune.check.model",
    "check_files": "servertune.check.audit",
    "config_kind": "servertune.check.audit",
    "plan_for_check": "servertune.check.audit",
    "read_config": "servertune.check.audit",
    "read_file": "servertune.check.audit",
}


def __getattr__(name: str) -> Any:
    """Import a public name from its module the first time it is used (PEP 562)."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The public names, loaded or not."""
    return sorted(set(globals()) | set(__all__))
