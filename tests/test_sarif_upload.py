"""SARIF that GitHub code scanning takes as it is: a physical location on every result, URIs
from the repository root (a monorepo's service folder included), one analysis category per
command and target, and GitHub's documented limits kept."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentguard.cli import app
from agentguard.engine import make_report
from agentguard.findings import Location
from agentguard.report import sarif
from agentguard.report.sarif import report_to_sarif
from agentguard.rules.hardening import RunsAsRoot
from tests.lock.helpers import write_project
from tests.sarif_checks import assert_uploadable, github_upload_problems

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "kontext-bot"


def _git_repo(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def _sarif(*args: str) -> tuple[int, dict[str, Any]]:
    result = CliRunner().invoke(app, [*args, "--format", "sarif", "--quiet"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, json.loads(result.stdout)


def _first_locations(doc: dict[str, Any]) -> list[tuple[str, str, int | None]]:
    out = []
    for res in doc["runs"][0]["results"]:
        phys = res["locations"][0]["physicalLocation"]
        out.append(
            (
                res["ruleId"],
                phys["artifactLocation"]["uri"],
                phys.get("region", {}).get("startLine"),
            )
        )
    return sorted(out)


@pytest.fixture()
def monorepo(tmp_path: Path) -> Path:
    """A repository with two services, one of them the example agent."""
    repo = _git_repo(tmp_path / "repo")
    shutil.copytree(
        EXAMPLE,
        repo / "services" / "agent",
        ignore=shutil.ignore_patterns("pylock.toml", "*.lock"),
    )
    other = repo / "services" / "worker"
    other.mkdir(parents=True)
    (other / "Dockerfile").write_text("FROM python:3.12-slim\nRUN pip install x\n")
    return repo


def test_the_checker_finds_what_github_refuses() -> None:
    bad = {
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": "x", "rules": [{"id": "R1"}]}},
                "results": [
                    {"ruleId": "R1", "message": {"text": "m"}, "locations": []},
                    {
                        "ruleId": "R1",
                        "message": {"text": "m"},
                        "locations": [
                            {"physicalLocation": {"artifactLocation": {"uri": "agent:1"}}}
                        ],
                    },
                    {
                        "ruleId": "R1",
                        "message": {"text": "m"},
                        "locations": [
                            {
                                "physicalLocation": {
                                    "artifactLocation": {"uri": "a", "uriBaseId": "NOPE"}
                                }
                            }
                        ],
                    },
                ],
            }
        ]
        * 21,
    }
    problems = github_upload_problems(bad)
    assert problems[0] == "21 runs > 20"
    assert problems[1:6] == [
        "run 0: no automationDetails.id (uploads would replace each other)",
        "rule R1: tags None",
        "rule R1: security-severity None",
        "run 0 result 0 (R1): no location",
        "run 0 result 1 (R1): uri 'agent:1' reads as a URI scheme",
    ]
    assert problems[6] == "run 0 result 2 (R1): uriBaseId 'NOPE' not in originalUriBaseIds"


def test_example_uris_are_from_the_repository_root(
    monorepo: Path, sarif_schema: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(monorepo / "services")  # run from anywhere inside the repository
    code, doc = _sarif("check", "agent")
    assert code == 1
    assert_uploadable(doc, sarif_schema)
    run = doc["runs"][0]
    assert run["originalUriBaseIds"] == {
        "%SRCROOT%": {
            "uri": monorepo.resolve().as_uri() + "/",
            "description": {"text": "The repository root: result URIs are relative to it."},
        }
    }
    assert run["automationDetails"] == {"id": "agentguard/check/services/agent/"}
    locations = _first_locations(doc)
    assert {uri for _, uri, _ in locations} == {
        "services/agent/pyproject.toml",
        "services/agent/Dockerfile",
        "services/agent/compose.yaml",
        "services/agent/kontext_bot/bot.py",
        "services/agent/.mcp.json",
    }
    assert ("AG401", "services/agent/Dockerfile", 1) in locations
    assert ("AG202", "services/agent/compose.yaml", 7) in locations
    for res in run["results"]:
        assert res["locations"][0]["physicalLocation"]["artifactLocation"]["uriBaseId"] == (
            "%SRCROOT%"
        )


def test_two_targets_in_one_repository_are_two_categories(
    monorepo: Path, sarif_schema: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(monorepo)
    ids = []
    for args in (
        ["check", "services/agent"],
        ["check", "services/worker"],
        ["inspect", "services/agent/compose.yaml", "--no-lock"],
        ["inspect", "services/agent", "--no-lock"],
    ):
        _code, doc = _sarif(*args)
        assert_uploadable(doc, sarif_schema)
        ids.append(doc["runs"][0]["automationDetails"]["id"])
    assert ids == [
        "agentguard/check/services/agent/",
        "agentguard/check/services/worker/",
        "agentguard/inspect/services/agent/compose.yaml/",
        "agentguard/inspect/services/agent/",
    ]
    _code, doc = _sarif("inspect", "services/agent/compose.yaml", "--no-lock")
    assert {uri for _, uri, _ in _first_locations(doc)} == {"services/agent/compose.yaml"}


def test_sarif_root_overrides_the_git_top_level(
    monorepo: Path, sarif_schema: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(monorepo)
    _code, doc = _sarif("check", "services/agent", "--sarif-root", "services")
    assert_uploadable(doc, sarif_schema)
    assert doc["runs"][0]["automationDetails"] == {"id": "agentguard/check/agent/"}
    assert ("AG401", "agent/Dockerfile", 1) in _first_locations(doc)
    # --sarif-output takes the same root
    out = monorepo / "out.sarif"
    CliRunner().invoke(
        app, ["check", "services/agent", "--sarif-output", str(out), "--sarif-root", "services"]
    )
    assert ("AG401", "agent/Dockerfile", 1) in _first_locations(json.loads(out.read_text()))


@pytest.mark.usefixtures("isolated_cache")
def test_dependency_findings_point_at_the_requirement_or_the_pin(
    tmp_path: Path, agent_index: dict[str, Any], sarif_schema: dict[str, Any]
) -> None:
    repo = _git_repo(tmp_path / "repo")
    project = write_project(repo / "bot", ["claude-agent-sdk==0.2.95", "typing-x>=1"])
    lock = CliRunner().invoke(app, ["lock", str(project), "--index-url", agent_index["url"]])
    assert lock.exit_code == 1, lock.output  # AG101 high on mcp
    pins = (project / "requirements.lock").read_text().splitlines()
    mcp_line = next(i for i, line in enumerate(pins, 1) if line.startswith("mcp=="))
    for args in (["lock", "--check", str(project)], ["check", str(project)]):
        _code, doc = _sarif(*args)
        assert_uploadable(doc, sarif_schema)
        located = {
            (rule, uri, line)
            for rule, uri, line in _first_locations(doc)
            if rule in ("AG101", "AG102")
        }
        assert located == {
            ("AG101", "bot/requirements.lock", mcp_line),  # transitive: the pin's line
            ("AG101", "bot/pyproject.toml", 7),  # the project's own typing-x>=1
        }, args
        [mcp] = [
            r
            for r in doc["runs"][0]["results"]
            if r["ruleId"] == "AG101" and r["properties"]["evidence"]["child"] == "mcp"
        ]
        # the dependency path is kept beside the file
        assert mcp["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] == (
            "project -> claude-agent-sdk==0.2.95 -> mcp"
        )


def test_limits_are_kept_and_what_is_left_out_is_said(
    sarif_schema: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    many = [
        RunsAsRoot.finding(
            f"root {i}",
            locations=[Location(path="Dockerfile", line=i + 1) for i in range(5)],
            fix="Add `USER 10001`.",
        )
        for i in range(4)
    ]
    monkeypatch.setattr(sarif, "MAX_RESULTS_PER_RUN", 3)
    monkeypatch.setattr(sarif, "MAX_LOCATIONS_PER_RESULT", 2)
    doc = report_to_sarif(make_report("check", many, []))
    assert_uploadable(doc, sarif_schema)
    run = doc["runs"][0]
    assert len(run["results"]) == 3
    assert [len(r["locations"]) for r in run["results"]] == [2, 2, 2]
    assert {r["properties"]["locations_left_out"] for r in run["results"]} == {3}
    [note] = run["invocations"][0]["toolExecutionNotifications"]
    assert note["descriptor"] == {"id": "results-left-out"}
    assert note["message"]["text"].startswith("1 results (the least severe) left out")


def test_image_paths_are_not_repository_paths(sarif_schema: dict[str, Any]) -> None:
    inside = RunsAsRoot.finding(
        "in the image",
        locations=[Location(layer="sha256:" + "a" * 64, path="/usr/lib/python3/x.py")],
        fix="Add `USER 10001`.",
    )
    history = RunsAsRoot.finding(
        "a history step", locations=[Location(note="history step 3")], fix="Add `USER 10001`."
    )
    doc = report_to_sarif(make_report("inspect", [inside, history], [], target="agent:1"))
    assert_uploadable(doc, sarif_schema)
    run = doc["runs"][0]
    arts = sorted(
        json.dumps(r["locations"][0]["physicalLocation"]["artifactLocation"], sort_keys=True)
        for r in run["results"]
    )
    assert arts == [
        '{"uri": "agent%3A1", "uriBaseId": "IMAGEROOT"}',
        '{"uri": "usr/lib/python3/x.py", "uriBaseId": "IMAGEROOT"}',
    ]
    assert set(run["originalUriBaseIds"]) == {"%SRCROOT%", "IMAGEROOT"}
    assert run["automationDetails"] == {"id": "agentguard/inspect/agent:1/"}


def test_an_image_configuration_finding_in_check_points_at_its_image(
    tmp_path: Path, sarif_schema: dict[str, Any]
) -> None:
    saved = "/srv/images/agent.tar"
    findings = [
        RunsAsRoot.finding(
            f"image {ref} runs as root.",
            locations=[Location(note=f"image {ref} config User")],
            fix="Add `USER 10001`.",
        )
        for ref in ("agent:1", saved)
    ]
    report = make_report(
        "check", findings, [], target=str(tmp_path), inputs={"images": ["agent:1", saved]}
    )
    doc = report_to_sarif(report)
    assert_uploadable(doc, sarif_schema)
    assert sorted(
        json.dumps(r["locations"][0]["physicalLocation"]["artifactLocation"], sort_keys=True)
        for r in doc["runs"][0]["results"]
    ) == [
        '{"uri": "agent%3A1", "uriBaseId": "IMAGEROOT"}',
        '{"uri": "srv/images/agent.tar", "uriBaseId": "IMAGEROOT"}',
    ]


def test_a_sarif_root_that_is_not_a_folder_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["check", str(tmp_path), "--format", "sarif", "--sarif-root", str(tmp_path / "no")]
    )
    assert result.exit_code == 2
    assert "--sarif-root" in result.output


@pytest.mark.usefixtures("isolated_cache")
def test_a_major_crossing_points_at_the_pin_it_would_move(
    tmp_path: Path, agent_index: dict[str, Any], sarif_schema: dict[str, Any]
) -> None:
    repo = _git_repo(tmp_path / "repo")
    project = write_project(repo / "bot", ["claude-agent-sdk==0.2.95", "mcp>=1,<2"])
    runner = CliRunner()
    assert (
        runner.invoke(app, ["lock", str(project), "--index-url", agent_index["url"]]).exit_code == 0
    )
    write_project(project, ["claude-agent-sdk==0.2.95"])  # the cap is dropped
    pins = (project / "requirements.lock").read_text().splitlines()
    mcp_line = next(i for i, line in enumerate(pins, 1) if line.startswith("mcp=="))
    code, doc = _sarif("lock", str(project), "--index-url", agent_index["url"], "--upgrade")
    assert code == 1
    assert_uploadable(doc, sarif_schema)
    assert [loc for loc in _first_locations(doc) if loc[0] == "AG102"] == [
        ("AG102", "bot/requirements.lock", mcp_line)  # the lock was left as it was
    ]
