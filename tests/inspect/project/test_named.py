"""A target named on the command line is read as what it is, or the run says it was not:
by name anywhere in its path, by content where the name says nothing, or by --kind.
Templates are skipped with the reason (never a failed source); `exclude` is listed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentguard.cli import app
from agentguard.inspect.project.dockerfile_facts import HAVE_BUILDKIT_PARSER
from agentguard.inspect.project.named import named_kind

DEVCONTAINER = """{
  // kept outside .devcontainer/, as some projects do
  "image": "mcr.microsoft.com/devcontainers/python:3.12",
  "runArgs": ["--privileged"],
  "mounts": ["source=/var/run/docker.sock,target=/var/run/docker.sock,type=bind"]
}
"""
# OpenHands keeps its sandbox image as a Jinja template (Dockerfile.j2)
TEMPLATE = """FROM {{ base_image }}
{% if build_from_scratch %}
RUN apt-get update && apt-get install -y git
{% endif %}
WORKDIR /openhands/code
"""


def run(*args: str | Path) -> tuple[int, dict]:  # type: ignore[type-arg]
    result = CliRunner().invoke(app, [*map(str, args), "--format", "json"], env={"NO_COLOR": "1"})
    return result.exit_code, json.loads(result.stdout) if result.stdout else {}


@pytest.mark.parametrize(
    ("path", "data", "kind"),
    [
        ("devcontainer.json", DEVCONTAINER, ("container", "devcontainer")),
        ("infra/dev/devcontainer.json", DEVCONTAINER, ("container", "devcontainer")),
        ("stack.yml", "version: '3'\nservices:\n  a:\n    image: a\n", ("container", "compose")),
        ("servers.json", '{"mcpServers": {"fs": {"command": "npx"}}}', ("mcp", None)),
        ("team.json", '{"permissions": {"allow": ["Bash(git:*)"]}}', ("settings", None)),
        ("sandbox.image", "# base\nFROM python:3.12\nUSER root\n", ("container", "dockerfile")),
        (".github/workflows/ci.yml", "on: push\njobs: {}\n", ("script", None)),
        ("notes.txt", "hello", None),
    ],
)
def test_kind_by_name_then_content(path: str, data: str, kind: object) -> None:
    assert named_kind(path, data.encode()) == kind


def test_a_devcontainer_anywhere_is_read_and_fails_the_run(tmp_path: Path) -> None:
    (tmp_path / "dev").mkdir()
    (tmp_path / "dev" / "devcontainer.json").write_text(DEVCONTAINER)
    code, report = run("inspect", tmp_path / "dev" / "devcontainer.json")
    assert code == 1
    assert {f["rule_id"] for f in report["findings"]} >= {"AG203", "AG403"}


def test_a_file_of_no_kind_is_exit_2_naming_the_kinds(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello")
    result = CliRunner().invoke(app, ["inspect", str(tmp_path / "notes.txt")])
    assert result.exit_code == 2
    assert "not a kind of file agentguard reads" in result.stderr
    assert "pass --kind to name one of: compose, dockerfile, devcontainer" in result.stderr


def test_kind_names_a_file_kind(tmp_path: Path) -> None:
    (tmp_path / "sandbox.txt").write_text("FROM python:3.12\nUSER root\n")
    code, report = run("inspect", tmp_path / "sandbox.txt", "--kind", "dockerfile")
    assert next(s["reason"] for s in report["sources"] if s["name"] == "sandbox.txt").startswith(
        "Dockerfile"
    )
    assert [f["rule_id"] for f in report["findings"]] == ["AG401"]
    assert code == 0  # AG401 is medium, below the default fail-on


def test_a_template_is_read_best_effort_never_failed(tmp_path: Path) -> None:
    (tmp_path / "Dockerfile.j2").write_text(TEMPLATE)
    code, report = run("inspect", tmp_path)
    assert code == 0
    tpl = next(s for s in report["sources"] if s["name"] == "Dockerfile.j2")
    parser = "buildkit" if HAVE_BUILDKIT_PARSER else "fallback"
    assert tpl == {
        "kind": "file",
        "name": "Dockerfile.j2",
        "status": "ok",
        "reason": f"Dockerfile template read best-effort before rendering ({parser} parser): "
        "every branch of its 1 `{% if %}` blocks read, 1 `{{ }}` values unknown",
    }
    # no USER in the template: the base image is unknown and named as such
    assert [f["message"] for f in report["findings"] if f["rule_id"] == "AG401"] == [
        "the final stage of Dockerfile.j2 sets no USER: it runs as the user of the base image "
        "{{base_image}}, which is root unless that image sets another."
    ]


def test_a_template_that_does_not_parse_once_read_is_skipped_with_the_reason(
    tmp_path: Path,
) -> None:
    (tmp_path / "Dockerfile.j2").write_text("{{ preamble }} FROM python:3.12\n")
    code, report = run("inspect", tmp_path)
    assert code == 0
    tpl = next(s for s in report["sources"] if s["name"] == "Dockerfile.j2")
    assert tpl["status"] == "skipped"
    assert tpl["reason"].startswith("a template (j2) that does not parse as a Dockerfile")


def test_exclude_removes_paths_and_lists_them(tmp_path: Path) -> None:
    (tmp_path / "sandbox").mkdir()
    (tmp_path / "sandbox" / "Dockerfile").write_text("FROM python:3.12\nRUN [\n")
    (tmp_path / "agentguard.toml").write_text('exclude = ["sandbox/**"]\n')
    code, report = run("inspect", tmp_path)
    assert code == 0
    assert [s for s in report["sources"] if s["status"] != "ok"] == [
        {
            "kind": "folder",
            "name": "sandbox",
            "status": "skipped",
            "reason": "excluded by configuration (exclude = 'sandbox/**')",
        }
    ]


def test_configuration_comes_from_the_target_not_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "Dockerfile").write_text("FROM python:3.12\n")
    (proj / "agentguard.toml").write_text('disable = ["AG401"]\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "agentguard.toml").write_text("unknown-key = 1\n")
    monkeypatch.chdir(elsewhere)
    code, report = run("inspect", proj)
    assert (code, report["findings"]) == (0, [])
    code, report = run("inspect", proj / "Dockerfile")
    assert (code, report["findings"]) == (0, [])


def test_check_with_nothing_to_check_is_not_0(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["check", str(tmp_path)])
    assert result.exit_code == 2
    assert "nothing to check" in result.stderr


def test_an_unreachable_engine_is_said_in_words(tmp_path: Path) -> None:
    host = f"unix://{tmp_path}/no-engine.sock"
    result = CliRunner().invoke(
        app, ["inspect", "agent-image:1", "--format", "json"], env={"DOCKER_HOST": host}
    )
    assert result.exit_code == 3
    (engine,) = json.loads(result.stdout)["sources"]
    assert engine["reason"] == f"cannot reach the Docker engine: no engine socket at {host}"
    assert engine["remedy"] == "start the Docker engine or point DOCKER_HOST at it, then retry"
