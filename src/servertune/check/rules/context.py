"""What every rule reads: the app servers, nginx configs and load balancers read and linked, the
machine, and the plan `gen` would write for it.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from servertune.check.balancers import LoadBalancer
from servertune.check.chain import BalancerLink, Link
from servertune.check.dependencies import Packaging
from servertune.check.ingress import INGRESS_NGINX_DOCS
from servertune.check.model import (
    GO_TRANSPORT_BALANCERS,
    AppServer,
    Location,
    NginxConfig,
    Note,
    PassTarget,
    Setting,
)
from servertune.sizing import Machine, Plan

#: AWS: a load balancer reuses its connection to a target until the idle timeout, so the
#: target's keep-alive must be longer (the Classic LB guide says so in these words).
_AWS_IDLE_DOCS = (
    "https://docs.aws.amazon.com/elasticloadbalancing/latest/classic/config-idle-timeout.html; "
    "https://docs.aws.amazon.com/elasticloadbalancing/latest/application/edit-load-balancer-attributes.html"
)


@dataclass(frozen=True)
class Wait:
    """A proxy waiting on an app server's answer: which proxy, the directive that sets how
    long (as the proxy writes it), that time, where a finding about it goes, and the app."""

    proxy: str
    directive: str
    #: What ends the directive's line in the proxy's file (`;` for nginx).
    end: str
    timeout: Setting[float]
    at: Location
    app: AppServer
    #: The proxy's documentation of its defaults (Caddy's, Traefik's), for the finding's `why`.
    docs: str = ""
    #: The pass it is of, when the proxy is nginx (its file's own spelling of the timeout).
    passing: PassTarget | None = None
    #: The directive set, `{}` for the seconds, when the proxy spells it otherwise.
    fix: str = ""

    def written(self, seconds: str) -> str:
        """The directive set to `seconds` (a figure), as the proxy's file writes it."""
        if self.passing is not None:
            return self.passing.timeout_written("read", seconds)
        if self.fix:
            return self.fix.format(seconds)
        return f"{self.directive} {seconds}s{self.end}"


@dataclass(frozen=True)
class Context:
    """Everything read, linked and known about the machine, the load balancer and the plan."""

    apps: list[AppServer]
    nginx: list[NginxConfig]
    links: list[Link]
    lb: LoadBalancer | None
    machine: Machine
    plan: Plan | None
    #: Resident memory of one warm worker (MiB) and where that number came from (`--rss-mb`,
    #: the workload's memory_per_worker_mb); None: the memory rule has nothing to multiply.
    rss_mb: float | None = None
    rss_source: str = ""
    #: Load balancer configs that were read (HAProxy), linked to the nginx or app server behind.
    balancer_links: list[BalancerLink] = dataclasses.field(default_factory=list)
    #: The cores judged by were named (`--workload`, `--cores`, a CPU limit the files declare),
    #: not just those of the machine running check: only then is a worker count compared.
    cores_named: bool = False
    #: A folder was walked (`servertune check FOLDER`): a launcher not found is not in the
    #: repository, where files given one by one may leave it out.
    walked: bool = False
    #: The development launches (`servertune.check.development`) set aside from `apps`, their
    #: links and fronts when the fault rules run: a rule that asks what else runs an image
    #: reads them here.
    set_aside: tuple[AppServer, ...] = ()
    #: Where the project's packaging installs uvloop (`uvicorn[standard]`) and where it names
    #: the server (`dependencies.packaging_declarations`).
    packaging: Packaging = dataclasses.field(default_factory=Packaging)
    #: What the readers found the platform or proxy reading it ignores (a Procfile line with
    #: no `type:`, an ingress-nginx timeout with a unit): `model.IGNORED_BY_PLATFORM` notes.
    ignored: tuple[Note, ...] = ()
    #: The framework development servers (`flask run`, `manage.py runserver`) the readers found
    #: started as an image's own command or by a production compose file:
    #: `model.DEVELOPMENT_SERVER_DEPLOYED` notes.
    development_servers: tuple[Note, ...] = ()
    #: `model.FRONT_PORT_MISSED` notes: a front's pass to a compose service at a port its
    #: server does not bind.
    ports_missed: tuple[Note, ...] = ()

    def for_faults(self) -> Context:
        """This context without the development launches (a launch through a file, container
        or stage named for development, an image command every container here replaces): a
        fault of a developer's run is not a deployment's."""
        from servertune.check.development import development_reason

        aside = [a for a in self.apps if development_reason(a, self.apps) is not None]
        if not aside:
            return self
        gone = {id(a) for a in aside}
        return dataclasses.replace(
            self,
            apps=[a for a in self.apps if id(a) not in gone],
            links=[link for link in self.links if id(link.app) not in gone],
            balancer_links=[b for b in self.balancer_links if id(b.app) not in gone],
            set_aside=tuple(aside),
        )

    def known(self) -> Context:
        """This context with each setting check could not work out (`AppServer.unknown`: a
        value only the running server knows, read as the default) taken out of what the rules
        read: the ones a server may lack are None (the rules' "not set here, not judged"),
        and an app whose worker or thread count is unknown is not sized."""
        if not any(app.unknown for app in self.apps):
            return self
        swapped = {id(app): _without_unknown(app) for app in self.apps if app.unknown}

        def one(app: AppServer | None) -> AppServer | None:
            return None if app is None else swapped.get(id(app), app)

        return dataclasses.replace(
            self,
            apps=[swapped.get(id(app), app) for app in self.apps],
            links=[
                dataclasses.replace(link, app=swapped.get(id(link.app), link.app))
                for link in self.links
            ],
            balancer_links=[dataclasses.replace(b, app=one(b.app)) for b in self.balancer_links],
        )

    def sized(self) -> list[AppServer]:
        """The app servers whose worker and thread counts are judged: not a development
        launch (a reloader: `--reload`, gunicorn's `reload`), which runs for a developer and
        restarts on every change, so no count of it is sized; nor one whose count the files
        compute from what only the running server knows (`AppServer.unknown`)."""
        return [
            app
            for app in self.apps
            if app.reloads is None and not {"workers", "threads"} & app.unknown
        ]

    def balancers_in_front(self) -> list[tuple[LoadBalancer, Location | None, object]]:
        """(load balancer, where its idle time is set, the nginx or app server behind it):
        the configs read, each in front of what it links to; `--lb` (or the workload's) in
        front of every nginx no config read fronts (every app server when there is no nginx)."""
        pairs: list[tuple[LoadBalancer, Location | None, object]] = []
        fronted: set[int] = set()
        for link in self.balancer_links:
            idle = link.balancer.idle
            if idle is None:
                continue
            behind = link.nginx if link.nginx is not None else link.app
            fronted.add(id(behind))
            balancer = LoadBalancer(
                link.balancer.title,
                idle.value if math.isinf(idle.value) else math.ceil(idle.value),
                link.balancer.idle_source,
                str(link.balancer.at),
                link.balancer.docs,
                replays_idempotent=link.balancer.kind in GO_TRANSPORT_BALANCERS,
                checks_before_reuse=link.balancer.kind == "apache",
            )
            pairs.append((balancer, idle.at, behind))
        for app in self.apps:
            # A cloud load balancer a manifest's annotations put in front of the pod.
            for name, idle in app.container.load_balancers if app.container else ():
                fronted.add(id(app))
                summary = name + (" (default)" if idle.default else "")
                pairs.append(
                    (
                        LoadBalancer(name, idle.value, summary, _AWS_IDLE_DOCS),
                        idle.at,
                        app,
                    )
                )
        if self.lb is not None:
            behind_lb: list[object] = list(self.nginx) or list(self.apps)
            pairs.extend((self.lb, None, b) for b in behind_lb if id(b) not in fronted)
        return pairs

    def waits(self) -> list[Wait]:
        """Every proxy timeout for an app server's answer, in front of that app server: each
        nginx `*_read_timeout` (at the directive, or the pass when left at the default) and
        each HAProxy backend's `timeout server` or unconditional `http-request set-timeout server`,
        each Caddy or Traefik front's shortest wait for the answer (unset: it waits forever,
        nothing to order)."""
        found = [
            Wait(
                "ingress-nginx" if link.passing.annotations else "nginx",
                link.passing.timeout_name("read"),
                ";",
                link.passing.read_timeout,
                link.passing.read_timeout.at
                if not link.passing.read_timeout.default
                else link.passing.at,
                link.app,
                INGRESS_NGINX_DOCS if link.passing.annotations else "",
                link.passing,
            )
            for link in self.links
        ]
        for link in self.balancer_links:
            timeout, directive = (
                link.balancer.server_timeout,
                link.balancer.server_timeout_directive,
            )
            if link.app is not None and timeout is not None:
                proxy = {
                    "haproxy": "HAProxy",
                    "caddy": "Caddy",
                    "traefik": "Traefik",
                    "apache": "Apache httpd",
                }[link.balancer.kind]
                found.append(
                    Wait(
                        proxy,
                        directive,
                        "",
                        timeout,
                        timeout.at,
                        link.app,
                        link.balancer.docs,
                        fix=link.balancer.server_timeout_fix,
                    )
                )
        return found


#: The fields a server may lack (None: not set, not judged), which an unknown value clears.
_MAY_LACK = (
    "keepalive",
    "request_timeout",
    "graceful_timeout",
    "worker_class",
    "concurrency_limit",
)


def _without_unknown(app: AppServer) -> AppServer:
    """`app` with each field it may lack that check could not work out set to None."""
    cleared: dict[str, None] = {name: None for name in _MAY_LACK if name in app.unknown}
    return dataclasses.replace(app, **cleared)  # type: ignore[arg-type]
