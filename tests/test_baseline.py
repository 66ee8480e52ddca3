"""Baselines: adopt the gate on an existing project, fail only on what is new."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from agentguard.baseline import BASELINE_SCHEMA, Baseline, BaselineEntry, read_baseline
from agentguard.cli import app
from agentguard.config import load_config
from agentguard.engine import UsageError
from agentguard.findings import Finding, Location
from agentguard.policy import apply_policy
from agentguard.rules.mounts import DockerSocketExposed

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "check" / "agent-project"


def run(*args: str | Path) -> Result:
    return CliRunner().invoke(app, [str(a) for a in args])


@pytest.fixture()
def agent_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    dest = tmp_path / "agent-project"
    shutil.copytree(FIXTURE, dest)
    monkeypatch.chdir(tmp_path)
    return dest


def test_adoption_old_findings_pass_and_a_new_one_fails(agent_project: Path) -> None:
    baseline = agent_project / "agentguard-baseline.json"
    # 1. today's findings fail the gate
    first = run("check", agent_project, "--format", "json")
    assert first.exit_code == 1
    old = [f for f in json.loads(first.stdout)["findings"] if f["suppressed"] is None]
    assert [f["rule_id"] for f in old] == ["AG203", "AG103", "AG401", "AG406", "AG407"]

    # 2. adopting: record them; the run that writes the baseline passes
    adopt = run("check", agent_project, "--write-baseline", baseline, "--format", "json")
    assert adopt.exit_code == 0, adopt.stderr
    doc = json.loads(baseline.read_text())
    assert doc["schema"] == BASELINE_SCHEMA
    assert doc["findings"] == sorted(
        (
            {
                "fingerprint": f["fingerprint"],
                "rule_id": f["rule_id"],
                "title": f["title"],
                "location": "; ".join(Location(**loc).describe() for loc in f["locations"]),
            }
            for f in old
        ),
        key=lambda e: (e["rule_id"], e["location"], e["fingerprint"]),
    )
    # the inline-suppressed AG212 is not baselined: its comment already accepts it
    assert "AG212" not in {e["rule_id"] for e in doc["findings"]}

    # 3. the next run with the baseline passes; the old findings are shown as suppressed
    again = run("check", agent_project, "--baseline", baseline, "--format", "json")
    assert again.exit_code == 0, again.stderr
    report = json.loads(again.stdout)
    assert [(f["rule_id"], f["suppressed"]) for f in report["findings"]] == [
        ("AG203", "baseline"),
        ("AG103", "baseline"),
        ("AG212", "inline: Dockerfile:3"),
        ("AG401", "baseline"),
        ("AG406", "baseline"),
        ("AG407", "baseline"),
    ]
    assert report["summary"]["suppressed"] == 6
    assert report["notes"][-1] == f"baseline {baseline}: 5 finding(s) matched"

    # 4. edits that move old findings to other lines keep them matched; a new hazard fails
    compose = agent_project / "compose.yaml"
    compose.write_text(
        "# the support agent\n"
        + compose.read_text().replace("    build: .\n", "    build: .\n    privileged: true\n")
    )
    new = run("check", agent_project, "--baseline", baseline, "--format", "json")
    assert new.exit_code == 1
    report = json.loads(new.stdout)
    active = [f for f in report["findings"] if f["suppressed"] is None]
    assert [(f["rule_id"], f["locations"]) for f in active] == [
        ("AG403", [{"path": "compose.yaml", "line": 6}])
    ]
    assert report["notes"][-1] == f"baseline {baseline}: 5 finding(s) matched"


def test_fingerprints_are_counted_not_sets(tmp_path: Path) -> None:
    def sock(line: int) -> Finding:
        return DockerSocketExposed.finding(
            "Service agent mounts /var/run/docker.sock.",
            locations=[Location(path="compose.yaml", line=line)],
            fix="Remove the socket mount.",
            evidence={"service": "agent"},
        ).with_context("production")

    a, b = sock(5), sock(9)  # same rule, file and evidence: one fingerprint, no line in it
    assert a.fingerprint() == b.fingerprint()
    entry = BaselineEntry(a.fingerprint(), "AG203", a.title, "compose.yaml:5")
    applied = apply_policy(
        [a, b],
        load_config(tmp_path),
        root=tmp_path,
        baseline=Baseline("b.json", (entry,)),
    )
    assert applied.findings == (a.with_suppression("baseline"), b)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            "{",
            "{p}: the baseline is not valid JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
        ),
        (
            '{"schema": "other/1", "findings": []}',
            "{p}: not an agentguard baseline (schema 'other/1', expected 'agentguard.baseline/1')",
        ),
        (
            '{"schema": "agentguard.baseline/1", "findings": [{"fingerprint": 1}]}',
            "{p}: findings[0] needs the string fields fingerprint, rule_id, title, location",
        ),
    ],
)
def test_a_bad_baseline_is_a_usage_error(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "baseline.json"
    path.write_text(content)
    with pytest.raises(UsageError) as info:
        read_baseline(path)
    assert str(info.value) == message.format(p=path)
