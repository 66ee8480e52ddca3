"""CI trusts only CI's configuration (#23 item 9).

On a pull request the scanned folder is the PR's: an ``agentguard.toml`` it adds with
``context = {test = ["**"]}`` grades every finding at most low, ``disable = [...]`` drops
them. The promises: every report (text, JSON, SARIF, SUMMARY.md) says which configuration
was used, where it came from, and how many findings it changed; ``--no-project-config``
and ``--config FILE`` read nothing of the folder's; an inline suppression counts only in a
real comment, and ``--no-inline-ignores`` turns them off.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from typer.testing import CliRunner, Result

from agentguard.cli import app
from tests.report_schema import validate_report

AGENT = (
    "from claude_agent_sdk import ClaudeAgentOptions\n"
    'opts = ClaudeAgentOptions(permission_mode="bypassPermissions", allowed_tools=["Read"])\n'
)
CONTEXT = 'context = {test = ["**"]}\n'
DISABLE = 'disable = ["AG301", "AG302", "AG303", "AG304", "AG305", "AG306"]\n'


def run(*args: str | Path) -> Result:
    return CliRunner().invoke(app, [str(a) for a in args])


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "agent.py").write_text(AGENT)
    return root


def _json(result: Result) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(result.stdout)
    validate_report(doc)
    return doc


@pytest.mark.parametrize(
    ("name", "text", "count"),
    [
        ("agentguard.toml", CONTEXT, "downgraded"),
        ("agentguard.toml", DISABLE, "disabled"),
        ("pyproject.toml", "[tool.agentguard]\n" + CONTEXT, "downgraded"),
        ("pyproject.toml", "[tool.agentguard]\n" + DISABLE, "disabled"),
    ],
)
def test_a_pull_request_that_switches_the_gate_off_is_shown_and_undone(
    project: Path, sarif_schema: dict[str, Any], name: str, text: str, count: str
) -> None:
    base = run("check", project, "--format", "json")
    assert base.exit_code == 1, base.stdout
    assert _json(base)["configuration"] == {
        "origin": "defaults",
        "policy": "default",
        "files": [],
        "ignored": [],
        "inline_ignores": True,
        "counts": {
            "disabled": 0,
            "downgraded": 0,
            "remapped": 0,
            "suppressed_config": 0,
            "suppressed_inline": 0,
            "suppressed_baseline": 0,
        },
    }
    (project / name).write_text(text)

    pr = run("check", project, "--format", "json")
    sarif = run("check", project, "--format", "sarif")
    shown = run("check", project)
    gate = run("check", project, "--no-project-config", "--format", "json")

    assert pr.exit_code == 0  # the PR's file turned the gate
    trace = _json(pr)["configuration"]
    assert trace["origin"] == "project" and trace["files"] == [str(project / name)]
    assert trace["counts"][count] >= 3, trace
    # SARIF: a warning in the invocation's configuration notifications, valid 2.1.0
    doc = json.loads(sarif.stdout)
    jsonschema.validate(doc, sarif_schema)
    (note,) = doc["runs"][0]["invocations"][0]["toolConfigurationNotifications"]
    assert note["level"] == "warning" and note["descriptor"]["id"] == "config-project"
    assert note["properties"] == trace
    assert doc["runs"][0]["properties"]["configuration"] == trace
    assert f"{trace['counts'][count]} " in note["message"]["text"]
    # text: the second line says it
    line = shown.stdout.splitlines()[1]
    assert line.strip().startswith(f"config: {project / name} (from the scanned folder):"), line
    # CI's mode: the folder's file is named, not read, and the gate holds again
    assert gate.exit_code == 1, gate.stdout
    ci = _json(gate)["configuration"]
    assert ci["origin"] == "defaults" and ci["files"] == []
    assert ci["ignored"] == [f"{project / name} (--no-project-config)"]
    assert sum(ci["counts"].values()) == 0


def test_config_file_reads_only_that_file(project: Path, tmp_path: Path) -> None:
    (project / "agentguard.toml").write_text(DISABLE)
    ci_file = tmp_path / "ci.toml"
    ci_file.write_text('fail-on = "high"\n')

    result = run("check", project, "--config", ci_file, "--format", "json")

    assert result.exit_code == 1
    trace = _json(result)["configuration"]
    assert trace["origin"] == "file" and trace["files"] == [str(ci_file)]
    assert trace["ignored"] == [f"{project / 'agentguard.toml'} (--config {ci_file} given)"]
    assert trace["counts"]["disabled"] == 0


def test_a_parent_folders_configuration_is_never_read(project: Path) -> None:
    (project.parent / "agentguard.toml").write_text(DISABLE)

    result = run("check", project, "--format", "json")

    assert result.exit_code == 1
    assert _json(result)["configuration"]["origin"] == "defaults"


def test_inspect_carries_the_trace_and_takes_the_flags(project: Path) -> None:
    (project / "agentguard.toml").write_text(CONTEXT)

    pr = run("inspect", project, "--kind", "project", "--no-lock", "--format", "json")
    ci = run(
        "inspect", project, "--kind", "project", "--no-lock", "--no-project-config", "-f", "json"
    )

    assert pr.exit_code == 0 and ci.exit_code == 1
    assert _json(pr)["configuration"]["counts"]["downgraded"] >= 3
    assert _json(ci)["configuration"]["ignored"] == [
        f"{project / 'agentguard.toml'} (--no-project-config)"
    ]


# -- inline suppressions: only real comments ------------------------------------------

SETTINGS_LINE = '  "permissions": {"defaultMode": "bypassPermissions"}'


@pytest.mark.parametrize(
    ("path", "text", "counts"),
    [
        # a JSON string value that reads like a comment is data
        (
            ".claude/settings.json",
            '{\n  "note": "// agentguard: ignore[AG305]",\n'
            + SETTINGS_LINE
            + ', "x": "// agentguard: ignore[AG305]"\n}\n',
            False,
        ),
        # a real JSONC comment on the line counts
        (
            ".claude/settings.json",
            "{\n" + SETTINGS_LINE + " // agentguard: ignore[AG305]\n}\n",
            True,
        ),
        # a Python docstring/string that reads like a comment is data
        (
            "agent.py",
            "from claude_agent_sdk import ClaudeAgentOptions\n"
            '"""\n# agentguard: ignore[AG305]\n"""\n'
            'opts = ClaudeAgentOptions(permission_mode="bypassPermissions", '
            'system_prompt="# agentguard: ignore[AG305]", allowed_tools=["Read"])\n',
            False,
        ),
        # a real comment above the line counts
        (
            "agent.py",
            "from claude_agent_sdk import ClaudeAgentOptions\n"
            "# agentguard: ignore[AG305]\n"
            'opts = ClaudeAgentOptions(permission_mode="bypassPermissions", allowed_tools=["Read"])\n',
            True,
        ),
    ],
)
def test_an_inline_suppression_counts_only_in_a_real_comment(
    tmp_path: Path, path: str, text: str, counts: bool
) -> None:
    root = tmp_path / "repo"
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    (root / path).write_text(text)

    result = run("check", root, "--format", "json")
    off = run("check", root, "--no-inline-ignores", "--format", "json")

    doc = _json(result)
    ag305 = [f for f in doc["findings"] if f["rule_id"] == "AG305"]
    assert ag305, doc["findings"]
    suppressed = [f["suppressed"] for f in ag305]
    if counts:
        assert all(s and s.startswith("inline: ") for s in suppressed), suppressed
        assert doc["configuration"]["counts"]["suppressed_inline"] == len(ag305)
    else:
        assert suppressed == [None] * len(ag305)
        assert doc["configuration"]["counts"]["suppressed_inline"] == 0
    undone = _json(off)
    assert [f["suppressed"] for f in undone["findings"] if f["rule_id"] == "AG305"] == [None] * len(
        ag305
    )
    assert undone["configuration"]["inline_ignores"] is False
    assert undone["configuration"]["counts"]["suppressed_inline"] == 0
