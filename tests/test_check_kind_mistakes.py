"""Issue 44 (a file taken for the wrong kind): a file is read as what it is, not as a kind its
name or a piece of its text suggests, and a file that is not yet what it will be (a compose
file a script renders) is a template note, never an error that fails the run."""

from __future__ import annotations

from pathlib import Path

from servertune.check.discover import discover
from tests.folder_support import chains, check_folder, write


def _relative(root: Path, paths: object) -> set[str]:
    """`paths` (Paths, or (Path, line) pairs) relative to `root`."""
    assert isinstance(paths, tuple)
    return {(p[0] if isinstance(p, tuple) else p).relative_to(root).as_posix() for p in paths}


def test_a_per_dockerfile_ignore_file_is_never_a_dockerfile(tmp_path: Path) -> None:
    """BuildKit's per-Dockerfile ignore file (`Dockerfile.dockerignore`, seen in ResearchHub/
    researchhub-backend) holds build-context patterns: it is neither read as a Dockerfile (an
    `unknown instruction '*'` error) nor named as an unread file; the Dockerfile beside it is
    read and its launch found."""
    write(
        tmp_path,
        {
            "Dockerfile": 'FROM python:3.12\nCMD ["gunicorn", "-w", "2", "app:app"]\n',
            "Dockerfile.dockerignore": "*\n!app\n",
        },
    )
    walk = discover(tmp_path)
    assert _relative(tmp_path, walk.files) == {"Dockerfile"}
    assert _relative(tmp_path, walk.unclaimed) == set()
    result = check_folder(tmp_path)
    assert result.errors == ()
    assert [(c[0], kind, n) for c, kind, n in chains(result, tmp_path)] == [
        ("Dockerfile:2", "gunicorn", 2)
    ]


def test_a_script_whose_heredoc_writes_a_unit_is_a_script_not_a_unit(tmp_path: Path) -> None:
    """A `#!/bin/bash` script (or a `.sh`) is a shell script whatever its text holds: an EC2
    user-data script whose heredoc writes a systemd unit (`cat << "EOF" > /etc/systemd/system/
    x.service` with `[Service]` and `ExecStart=`, seen in pythonitalia/pycon) is read as a
    script, not as a unit failing on `not a Key=value line: 'set -x'`."""
    unit = (
        'set -x\ncat << "EOF" > /etc/systemd/system/web.service\n[Unit]\nDescription=web\n'
        "[Service]\nExecStart=/usr/bin/docker run shop\nEOF\nsystemctl start web\n"
    )
    write(tmp_path, {"userdata.sh": "#!/bin/bash\n" + unit, "boot": "#!/bin/bash\n" + unit})
    result = check_folder(tmp_path)
    assert result.errors == ()
    assert _relative(tmp_path, result.files) == {"userdata.sh", "boot"}


def test_a_compose_file_with_whole_line_placeholders_is_a_template(tmp_path: Path) -> None:
    """A compose file a script renders (envsubst) whose lines are whole `${VAR}` placeholders
    (`${POSTGRES_EXPOSED_PORT}` standing for a `ports:` block, seen in rdmorganiser/
    rdmo-docker-compose) is not YAML until rendered: it is skipped as a template at the first
    placeholder line, not a YAML syntax error that exits 2. A placeholder line YAML reads as
    text (a block scalar's script) leaves its file read."""
    write(
        tmp_path,
        {
            "docker/dc_master.yaml": (
                "services:\n  web:\n    image: shop\n    command: gunicorn -w 2 app:app\n"
                "    ${WEB_PORTS_PREFIX}\n    ${WEB_PORTS}\n    restart: always\n"
            ),
            "compose.yaml": (
                "services:\n  web:\n    image: shop\n    entrypoint:\n      - sh\n      - -c\n"
                "      - |\n        ${SETUP}\n        exec gunicorn -w 3 app:app\n"
            ),
        },
    )
    walk = discover(tmp_path)
    assert [(p.relative_to(tmp_path).as_posix(), n) for p, n in walk.templates] == [
        ("docker/dc_master.yaml", 5)
    ]
    assert _relative(tmp_path, walk.files) == {"compose.yaml"}
    assert check_folder(tmp_path).errors == ()


def test_go_template_braces_in_a_quoted_word_of_a_command_substitution_are_data(
    tmp_path: Path,
) -> None:
    """`{{.ID}}` given to `docker ps --format` is the docker CLI's own template, text the
    script passes on, also where the quoted word stands in a `$(...)` inside a double-quoted
    string (`echo "docker exec $(docker ps --format "{{.ID}}") ..."`, seen in SEED-platform/
    seed's backup script): the script is read, not skipped as a Jinja / Helm template. A
    marker where the shell reads words still makes a template."""
    write(
        tmp_path,
        {
            "backup.sh": (
                "#!/bin/bash\n"
                'echo "docker exec $(docker ps -f "name=db" --format "{{.ID}}") pg_dump > x"\n'
                'docker exec $(docker ps -f "name=db" --format "{{.ID}}") pg_dump > x\n'
            ),
            "start.sh": '#!/bin/sh\necho "$(date)"\nexec gunicorn -w {{ workers }} app:app\n',
        },
    )
    walk = discover(tmp_path)
    assert _relative(tmp_path, walk.files) == {"backup.sh"}
    assert [(p.name, n) for p, n in walk.templates] == [("start.sh", 3)]


def test_vendor_files_the_run_copies_or_mounts_are_the_projects_own(tmp_path: Path) -> None:
    """A `vendor/` folder is other people's code and left out, except the files a Dockerfile
    here COPYs (`COPY vendor/docker/site.conf /etc/nginx/...`, seen in ror-community/ror-api)
    or a compose file here mounts (`./vendor/conf:/etc/...`, a folder's files): the run's own
    build names them, so they are read. The vendored files nothing names stay left out, and a
    `COPY vendor/ vendor/` of the whole tree names none of them."""
    write(
        tmp_path,
        {
            "Dockerfile": (
                "FROM python:3.12\nCOPY vendor/ vendor/\n"
                "COPY vendor/docker/site.conf /etc/nginx/conf.d/site.conf\n"
                'CMD ["gunicorn", "-b", "127.0.0.1:8000", "app:app"]\n'
            ),
            "docker-compose.yml": (
                "services:\n  web:\n    build: .\n    volumes:\n"
                "      - ./vendor/conf:/etc/supervisor/conf.d:ro\n"
            ),
            "vendor/docker/site.conf": (
                "server {\n  listen 80;\n  location / { proxy_pass http://127.0.0.1:8000; }\n}\n"
            ),
            "vendor/conf/app.conf": "[program:app]\ncommand=gunicorn -w 2 app:app\n",
            "vendor/lib/deploy/nginx.conf": "server {\n  listen 81;\n}\n",
        },
    )
    assert _relative(tmp_path, discover(tmp_path).files) == {
        "Dockerfile",
        "docker-compose.yml",
        "vendor/docker/site.conf",
        "vendor/conf/app.conf",
    }


def test_traefik_dynamic_toml_named_for_its_routes_is_found_and_joined(tmp_path: Path) -> None:
    """A Traefik file provider's dynamic config in TOML named for its routes
    (`rules/backend.toml` mounted at the `--providers.file.directory`, its table headers
    indented as TOML allows: `  [http.routers.back]`, `[[http.services.x.loadbalancer.servers]]`;
    seen in mlco2/codecarbon) is found by the walk, read as Traefik's and the server at its url
    gets it as a front. Another tool's TOML (`pyproject.toml`) is neither read nor named."""
    write(
        tmp_path,
        {
            "rules/backend.toml": (
                '[http]\n  [http.routers]\n    [http.routers.back]\n      service = "back"\n'
                "  [http.services]\n    [http.services.back.loadbalancer]\n"
                "      [[http.services.back.loadbalancer.servers]]\n"
                '        url = "http://127.0.0.1:8000"\n'
            ),
            "pyproject.toml": '[project]\nname = "shop"\n[tool.ruff]\nline-length = 99\n',
            "Procfile": "web: gunicorn -b 127.0.0.1:8000 -w 2 app:app\n",
        },
    )
    walk = discover(tmp_path)
    assert _relative(tmp_path, walk.files) == {"rules/backend.toml", "Procfile"}
    assert _relative(tmp_path, walk.unclaimed) == set()
    result = check_folder(tmp_path)
    assert [
        (link.app.file.name if link.app else None, link.server.at.file.name)
        for link in result.balancer_links
    ] == [("Procfile", "backend.toml")]


def test_another_owners_published_image_gets_no_could_build_it_note(tmp_path: Path) -> None:
    """With the repository's owner known (its git origin `acme/shop-search-opensearch`), a
    compose image of another owner (`opensearchproject/opensearch`, a program the repository
    is named for; seen in stac-utils/stac-fastapi-elasticsearch-opensearch) runs its own
    program: no "N Dockerfiles here could build it" note. The owner's images
    (`acme/dashboards`, `acme/shop-search-api`) and another owner's image holding the
    repository's whole name (`mirror/shop-search-opensearch`) still get it."""
    root = write(
        tmp_path / "shop-search-opensearch",
        {
            ".git/config": (
                '[remote "origin"]\n\turl = git@github.com:acme/shop-search-opensearch.git\n'
            ),
            "dockerfiles/Dockerfile.dev": 'FROM python:3.12\nCMD ["gunicorn", "app:app"]\n',
            "dockerfiles/Dockerfile.deploy": (
                'FROM python:3.12\nCMD ["gunicorn", "-w", "4", "app:app"]\n'
            ),
            "compose.yml": (
                "services:\n  app:\n    image: acme/shop-search-api\n"
                "  db:\n    image: opensearchproject/opensearch:2.11.1\n"
                "  ui:\n    image: acme/dashboards:latest\n"
                "  mirror:\n    image: mirror/shop-search-opensearch:1\n"
            ),
        },
    )
    noted = sorted(
        n.message.split(": ")[2] for n in check_folder(root).notes if "could build it" in n.message
    )
    assert noted == [
        "image acme/dashboards:latest",
        "image acme/shop-search-api",
        "image mirror/shop-search-opensearch:1",
    ]
