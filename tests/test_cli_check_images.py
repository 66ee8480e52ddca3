"""`agentguard check --image` on the real engine: an image by reference, the same image as a
`docker save` tarball, images named in compose, and an image that does not exist (exit 3)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from agentguard.cli import app
from tests.inspect.engine_support import Made, unique
from tests.sarif_checks import assert_uploadable

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "check" / "agent-project"
# Looks like a provider key (so the secret rule recognises its format); it is not one.
SECRET = "sk-ant-api03-" + "Q" * 40
DOCKERFILE = f"""\
FROM scratch
COPY busybox /bin/sh
ENV ANTHROPIC_API_KEY={SECRET}
WORKDIR /app
COPY README.md /app/README.md
"""

pytestmark = pytest.mark.engine


@pytest.fixture(scope="module")
def agent_image(
    docker_client: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, Path]]:
    """An agent image with a literal key in ENV and a document in its workdir, and its tarball."""
    made = Made(docker_client)
    context = tmp_path_factory.mktemp("context")
    (context / "README.md").write_text("# plans for next quarter\n")
    tag = unique("check") + ":1"
    try:
        made.build(tag, context, DOCKERFILE)
        tarball = tmp_path_factory.mktemp("saved") / "agent.tar"
        with tarball.open("wb") as fh:
            for chunk in docker_client.images.get(tag).save(named=True):
                fh.write(chunk)
        yield tag, tarball
    finally:
        made.cleanup()


@pytest.fixture()
def agent_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    dest = tmp_path / "agent-project"
    shutil.copytree(FIXTURE, dest)
    monkeypatch.chdir(tmp_path)
    return dest


def run(*args: str | Path) -> Result:
    return CliRunner().invoke(app, [str(a) for a in args])


def image_findings(doc: dict[str, Any], target: str) -> list[tuple[str, str]]:
    return [
        (f["rule_id"], f["severity"])
        for f in doc["findings"]
        if target in f["message"] and f["suppressed"] is None
    ]


def test_image_by_reference_and_as_tarball(
    agent_project: Path, agent_image: tuple[str, Path]
) -> None:
    tag, tarball = agent_image
    result = run("check", agent_project, "--image", tag, "--image", tarball, "--format", "json")
    assert result.exit_code == 1, result.stderr
    doc = json.loads(result.stdout)
    assert doc["complete"] is True
    assert doc["provenance"]["inputs"] == {"images": [tag, str(tarball)]}
    for target in (tag, str(tarball)):
        assert image_findings(doc, target) == [
            ("AG402", "critical"),
            ("AG201", "high"),
            ("AG401", "medium"),
        ]
    # the project's own findings are in the same report
    assert {f["rule_id"] for f in doc["findings"]} >= {"AG203", "AG103"}
    secret = next(f for f in doc["findings"] if f["rule_id"] == "AG402")
    assert secret["evidence"]["variable"] == "ANTHROPIC_API_KEY"


def test_the_secret_value_never_appears_in_any_format(
    agent_project: Path, agent_image: tuple[str, Path], sarif_schema: dict[str, Any]
) -> None:
    tag, _ = agent_image
    for fmt in ("text", "json", "sarif"):
        result = run("check", agent_project, "--image", tag, "--format", fmt, "--verbose")
        assert result.exit_code == 1
        assert "ANTHROPIC_API_KEY" in result.stdout
        assert SECRET not in result.stdout and SECRET[:20] not in result.stdout
        if fmt == "sarif":  # image findings too: uploadable, never a repository path
            doc = json.loads(result.stdout)
            assert_uploadable(doc, sarif_schema)
            bases = {
                r["ruleId"]: r["locations"][0]["physicalLocation"]["artifactLocation"].get(
                    "uriBaseId"
                )
                for r in doc["runs"][0]["results"]
                if r["properties"]["evidence"].get("variable") == "ANTHROPIC_API_KEY"
            }
            assert bases == {"AG402": "IMAGEROOT"}, bases


def test_images_from_compose(agent_project: Path, agent_image: tuple[str, Path]) -> None:
    tag, _ = agent_image
    compose = agent_project / "compose.yaml"
    compose.write_text(compose.read_text().replace("support-agent:1.0", tag))
    result = run("check", agent_project, "--images-from-compose", "--format", "json")
    assert result.exit_code == 1, result.stderr
    doc = json.loads(result.stdout)
    assert doc["complete"] is True
    assert doc["provenance"]["inputs"] == {"images": [tag]}
    assert image_findings(doc, tag) == [
        ("AG402", "critical"),
        ("AG201", "high"),
        ("AG401", "medium"),
    ]


def test_an_image_that_does_not_exist_makes_the_run_incomplete(
    agent_project: Path, docker_client: Any
) -> None:
    missing = unique("missing") + ":1"
    result = run("check", agent_project, "--image", missing, "--format", "json")
    assert result.exit_code == 3
    doc = json.loads(result.stdout)
    assert doc["complete"] is False
    failed = [s for s in doc["sources"] if s["status"] == "failed"]
    assert [(s["kind"], s["name"], s["error_code"]) for s in failed] == [
        ("image", missing, "not-found")
    ]
