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
    old = json.loads(first.stdout)["findings"]

    # 2. adopting: record them; the run that writes the baseline passes
    adopt = run("check", agent_project, "--write-baseline", baseline, "--format", "json")
    assert adopt.exit_code == 0, adopt.stderr
    doc = json.loads(baseline.read_text())
    assert doc == {
        "schema": BASELINE_SCHEMA,
        "tool_version": doc["tool_version"],
        "findings": [
            {
                "fingerprint": f["fingerprint"],
                "rule_id": f["rule_id"],
                "title": f["title"],
                "location": "pyproject.toml",
            }
            for f in old
        ],
    }

    # 3. the next run with the baseline passes; the old findings are shown as suppressed
    again = run("check", agent_project, "--baseline", baseline, "--format", "json")
    assert again.exit_code == 0, again.stderr
    report = json.loads(again.stdout)
    assert [(f["rule_id"], f["suppressed"]) for f in report["findings"]] == [("AG103", "baseline")]
    assert report["summary"]["suppressed"] == 1
    assert report["notes"][-1] == f"baseline {baseline}: 1 finding(s) matched"

    # 4. a new finding (the inputs changed: a different AG103 evidence) fails the gate
    pyproject = agent_project / "pyproject.toml"
    text = pyproject.read_text().replace('"mcp>=1.23,<2",', '"mcp>=1.23,<2", "httpx>=0.27,<1",')
    pyproject.write_text(text)
    new = run("check", agent_project, "--baseline", baseline, "--format", "json")
    assert new.exit_code == 1
    report = json.loads(new.stdout)
    assert [(f["rule_id"], f["suppressed"]) for f in report["findings"]] == [("AG103", None)]
    assert report["notes"][-1] == (
        f"baseline {baseline}: 0 finding(s) matched; 1 baseline entry no longer found (fixed?)"
    )


def test_fingerprints_are_counted_not_sets(tmp_path: Path) -> None:
    def sock(line: int) -> Finding:
        return DockerSocketExposed.finding(
            "Service agent mounts /var/run/docker.sock.",
            locations=[Location(path="compose.yaml", line=line)],
            fix="Remove the socket mount.",
            evidence={"service": "agent"},
        )

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
