"""An nginx upstream that names a Kubernetes Service by its DNS name
(`<service>.<namespace>.svc.cluster.local`, seen in flathub-infra/website's
`backend.flathub.svc.cluster.local:8000`) whose manifests are not in the repository joins the
server started from the folder of that Service's name at that port, as a bare `backend:8000`
does, and says so in a `joined-by-name` note. Each repository is written here for the form it
pins."""

from __future__ import annotations

from pathlib import Path

import pytest

from servertune.check.graph import launches
from tests.folder_support import check_folder, write

_NGINX = """\
events {}
http {
  upstream api { server %s; }
  server {
    listen 8080;
    location / { proxy_pass http://api; }
  }
}
"""


def _repository(root: Path, server: str) -> Path:
    return write(
        root,
        {
            "backend/Dockerfile": (
                'FROM python:3.12-slim\nCOPY . /app\nCMD ["granian", "--interface", "asgi", '
                '"--host", "0.0.0.0", "--port", "8000", "app:app"]\n'
            ),
            "backend/app.py": "app = None\n",
            "nginx/nginx.conf": _NGINX % server,
        },
    )


@pytest.mark.parametrize(
    "server",
    ["backend.shop.svc.cluster.local:8000", "backend.shop.svc:8000", "backend.shop:8000"],
)
def test_a_kubernetes_service_name_joins_the_server_of_its_folder_with_a_note(
    tmp_path: Path, server: str
) -> None:
    """The Service `backend` of namespace `shop`, in each spelling of its DNS name, is the
    server built from backend/ listening on 8000: joined, with a note saying it was joined by
    name and port (no manifest here says which pods the Service selects); on another port,
    nothing."""
    root = _repository(tmp_path, server)
    result = check_folder(root)
    fronts = [
        [f"{at.file.relative_to(root).as_posix()}:{at.line}" for at in launch.fronts]
        for launch in launches(result.apps, result.links, result.balancer_links)
    ]
    assert fronts == [["nginx/nginx.conf:6"]]
    assert [n.kind for n in result.notes if n.kind == "joined-by-name"] == ["joined-by-name"]
    # The name alone joins nothing: the Service's port must be the server's.
    other = check_folder(_repository(tmp_path / "other", server.replace(":8000", ":9000")))
    assert not other.links
    assert not [n for n in other.notes if n.kind == "joined-by-name"]
