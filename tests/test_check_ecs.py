"""`servertune check` on AWS ECS task definitions: JSON registered with the AWS CLI and
Terraform's `aws_ecs_task_definition`, each container run as Docker runs its image."""

from __future__ import annotations

from pathlib import Path

from servertune.check.audit import CheckResult
from servertune.check.model import AppServer
from tests.folder_support import write
from tests.test_check_platforms import check_folder


def on_ecs(result: CheckResult) -> list[AppServer]:
    return [a for a in result.apps if a.container and a.container.platform == "ecs"]


def notes(result: CheckResult, kind: str) -> list[str]:
    return [f"{n.at.file.name}:{n.at.line} {n.message}" for n in result.notes if n.kind == kind]


TERRAFORM = """\
resource "aws_ecs_task_definition" "web" {
  family = "shop-${terraform.workspace}-web"

  container_definitions = jsonencode([
    {
      name              = "web"
      image             = "${data.aws_ecr_repository.shop.repository_url}:latest"
      memory            = 512
      memoryReservation = local.is_prod ? 400 : 10
      essential         = true
      command = [
        "gunicorn", "-w", "3", "-b", "0.0.0.0:8000", "shop.wsgi"
      ]
      environment = local.env_vars
      portMappings = [{ containerPort = 8000, hostPort = 0 }]
      stopTimeout = 35
    },
    {
      name    = "worker"
      image   = "redis:7"
      command = ["celery", "-A", "shop", "worker"]
    }
  ])
}
"""


def test_terraform_jsonencode_container_command_is_a_launch_with_its_stop_timeout(
    tmp_path: Path,
) -> None:
    """A Terraform `aws_ecs_task_definition` whose `container_definitions` is `jsonencode` of
    HCL objects (seen in pythonitalia/pycon's infrastructure/.../web_task.tf): a container's
    `command` starts its server, in a container of ECS with its `stopTimeout` and `memory`
    where written; an image only the deployment names (an ECR URL from Terraform data) leaves
    the command as written, and an expression (`local.env_vars`) is an unresolved-variable
    note, never a refusal."""
    write(tmp_path, {"infra/web_task.tf": TERRAFORM, "infra/vpc.tf": 'resource "x" "y" {}\n'})
    result = check_folder(tmp_path)
    assert not result.errors
    (app,) = on_ecs(result)
    box = app.container
    assert box is not None
    assert (box.name, app.workers.value) == ("web", 3)
    assert [s.value for s in app.sockets] == ["0.0.0.0:8000"]
    assert box.grace_period_s is not None
    assert (box.grace_period_s.value, box.grace_period_s.at.line) == (35.0, 16)
    assert not box.grace_period_s.default
    assert box.memory_limit_mb is not None
    assert box.memory_limit_mb.value == 512
    assert any("local.env_vars" in n for n in notes(result, "unresolved-variable"))


def test_task_definition_json_runs_its_repository_image_with_ecs_default_stop(
    tmp_path: Path,
) -> None:
    """A JSON task definition (`aws ecs register-task-definition --cli-input-json`) whose
    container names no command runs its image's CMD when a Dockerfile here builds that image
    (tied as compose and Kubernetes images are: `acme/shop` by `shop/Dockerfile`), under the container's `environment`; with no
    `stopTimeout` ECS stops it 30 s after SIGTERM (its documented default)."""
    write(
        tmp_path,
        {
            "shop/Dockerfile": "FROM python:3.12\nWORKDIR /app\nCOPY . /app\n"
            'CMD ["gunicorn", "-b", "0.0.0.0:8000", "shop.wsgi"]\n',
            "deploy/task-definition.json": '{\n  "family": "shop",\n'
            '  "containerDefinitions": [\n    {\n      "name": "shop",\n'
            '      "image": "ghcr.io/acme/shop:1.0",\n'
            '      "environment": [{"name": "WEB_CONCURRENCY", "value": "6"}],\n'
            '      "portMappings": [{"containerPort": 8000}]\n    }\n  ]\n}\n',
        },
    )
    result = check_folder(tmp_path)
    assert not result.errors
    (app,) = on_ecs(result)
    assert app.workers.value == 6
    assert app.workers.at.file.name == "task-definition.json"
    box = app.container
    assert box is not None
    assert box.grace_period_s is not None
    assert (box.grace_period_s.value, box.grace_period_s.default) == (30.0, True)


def test_terraform_definitions_from_a_heredoc_or_a_named_file(tmp_path: Path) -> None:
    """`container_definitions` written as a JSON heredoc, or read by `file()` /
    `templatefile()` from a JSON file beside the Terraform: each container's `entryPoint` +
    `command` is its command line; a named file not in the repository is said not followed."""
    write(
        tmp_path,
        {
            "tf/api.tf": 'resource "aws_ecs_task_definition" "api" {\n'
            "  container_definitions = <<EOF\n"
            '[{"name": "api", "image": "acme/api", "entryPoint": ["uvicorn"],\n'
            '  "command": ["app.main:app", "--host", "0.0.0.0", "--port", "80"]}]\n'
            "EOF\n}\n"
            'resource "aws_ecs_task_definition" "web" {\n'
            '  container_definitions = templatefile("${path.module}/web.json", {})\n}\n'
            'resource "aws_ecs_task_definition" "gone" {\n'
            '  container_definitions = file("missing.json")\n}\n',
            "tf/web.json": '[{"name": "web", "image": "acme/web",\n'
            '  "command": ["gunicorn", "-w", "2", "web.wsgi"]}]\n',
        },
    )
    result = check_folder(tmp_path)
    assert not result.errors
    apps = {a.container.name: a for a in on_ecs(result) if a.container is not None}
    assert sorted(apps) == ["api", "web"]
    assert apps["api"].kind == "uvicorn"
    assert [s.value for s in apps["api"].sockets] == ["0.0.0.0:80"]
    assert apps["web"].workers.value == 2
    assert any("missing.json" in n for n in notes(result, "not-followed"))


def test_options_given_to_an_image_not_tied_here_are_not_followed(tmp_path: Path) -> None:
    """A container whose `command` is options for its image's ENTRYPOINT (`-b :8000
    --workers=2`, seen in azavea/iow-boundary-tool's task-definitions/app.json.tmpl) in an
    image only the deployment names is a `not-followed` note saying so, never "starts no
    server"; a command naming another program (`celery worker`) is no note."""
    write(
        tmp_path,
        {
            "tf/app.tf": 'resource "aws_ecs_task_definition" "app" {\n'
            '  container_definitions = templatefile("${path.module}/app.json.tmpl", {})\n}\n',
            "tf/app.json.tmpl": '[{"name": "${name}", "image": "${image}",\n'
            '  "command": ["-b :${port}", "--workers=2", "app.wsgi"]},\n'
            ' {"name": "worker", "image": "${image}", "command": ["celery", "worker"]}]\n',
        },
    )
    result = check_folder(tmp_path)
    assert not result.errors
    assert not on_ecs(result)
    (followed,) = notes(result, "not-followed")
    assert followed.startswith("app.json.tmpl:2 ")
    assert "ENTRYPOINT of '${image}'" in followed
    assert not notes(result, "starts-no-server")


CONTAINERS_TEMPLATE = """\
[
  {
    "name": "django",
    "image": "${image}",
    "command": ["gunicorn", "-b", ":8080", "--workers=${workers}", "shop.wsgi"],
    "portMappings": [{ "containerPort": ${app_port}, "hostPort": ${app_port} }]
  }
]
"""


def test_container_list_named_app_json_is_read_as_ecs_containers_with_placeholders(
    tmp_path: Path,
) -> None:
    """A JSON list of ECS container definitions kept for Terraform's `templatefile`, named
    `app.json` under `task-definitions/` (seen in opensupplyhub/open-supply-hub and
    azavea/pfb-network-connectivity), is no Heroku app.json: it is read as ECS containers,
    its unquoted `${app_port}` placeholders as values known only when Terraform runs, and the
    run never exits with an error."""
    write(
        tmp_path,
        {
            "deployment/terraform/task-definitions/app.json": CONTAINERS_TEMPLATE,
            "deployment/terraform/task-definitions/app_dd.json": '[{"name": "dd", '
            '"image": "${image}", "essential": true,\n'
            '  "command": ["uvicorn", "app.main:app", "--port", "80"]}]\n',
        },
    )
    result = check_folder(tmp_path)
    assert not result.errors
    apps = {a.container.name: a for a in on_ecs(result) if a.container is not None}
    assert sorted(apps) == ["dd", "django"]
    assert apps["django"].kind == "gunicorn"
    assert apps["dd"].kind == "uvicorn"


def test_container_list_gives_its_command_to_the_entrypoint_of_a_tied_image(
    tmp_path: Path,
) -> None:
    """A container of such a list whose `command` is options (`-b :8080 ... shop.wsgi`) runs
    under the ENTRYPOINT of the image a Dockerfile here builds (`acme/shop` by
    `shop/Dockerfile`, as compose images are tied): one gunicorn launch with those options."""
    write(
        tmp_path,
        {
            "shop/Dockerfile": "FROM python:3.12\nWORKDIR /app\nCOPY . /app\n"
            'ENTRYPOINT ["/usr/local/bin/gunicorn"]\nCMD ["shop.wsgi"]\n',
            "infra/task-definitions/app.json": '[{"name": "shop", '
            '"image": "ghcr.io/acme/shop:${tag}",\n'
            '  "command": ["-b :8080", "--workers=3", "shop.wsgi"]}]\n',
        },
    )
    result = check_folder(tmp_path)
    assert not result.errors
    (app,) = on_ecs(result)
    assert app.kind == "gunicorn"
    assert app.workers.value == 3


def test_container_list_a_terraform_file_reads_is_one_launch(tmp_path: Path) -> None:
    """A container list that a Terraform `aws_ecs_task_definition` here reads with
    `templatefile()` is read through that Terraform file alone: one launch, not two."""
    write(
        tmp_path,
        {
            "tf/ecs.tf": 'resource "aws_ecs_task_definition" "app" {\n  container_definitions = '
            'templatefile("${path.module}/task-definitions/app.json", {})\n}\n',
            "tf/task-definitions/app.json": CONTAINERS_TEMPLATE,
        },
    )
    result = check_folder(tmp_path)
    assert not result.errors
    (app,) = on_ecs(result)
    assert app.container is not None
    assert app.container.name == "django"


def test_a_container_running_an_image_the_deployment_names_is_not_followed(
    tmp_path: Path,
) -> None:
    """A container with no command whose image only the deployment names (`"image":
    "${django_url}"`, seen in azavea/pfb-network-connectivity's task-definitions/app.json)
    runs that image's own command, which no file here ties to a Dockerfile: a not-followed
    note at its `image`, never "starts no server"; a library image's container is no note."""
    write(
        tmp_path,
        {
            "deployment/task-definitions/app.json": '[{"name": "django", "essential": true,\n'
            '  "image": "${django_url}", "memory": 1024},\n'
            ' {"name": "cache", "image": "redis:7", "essential": true}]\n',
        },
    )
    result = check_folder(tmp_path)
    assert not result.errors
    (followed,) = notes(result, "not-followed")
    assert followed.startswith("app.json:2 ")
    assert "image '${django_url}'" in followed
    assert not notes(result, "starts-no-server")
