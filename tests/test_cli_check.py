"""`agentguard check` end to end: snapshots of text/JSON/SARIF, the exit-code table, errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from typer.testing import CliRunner, Result

from agentguard.cli import app
from tests.sarif_checks import assert_uploadable
from tests.snapshot import assert_snapshot, normalise

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "check" / "agent-project"


@pytest.fixture()
def agent_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the fixture project; the tests run from its parent, as a CI job would."""
    dest = tmp_path / "agent-project"
    shutil.copytree(FIXTURE, dest)
    monkeypatch.chdir(tmp_path)
    return dest


REL = Path("agent-project")


def run(*args: str | Path, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(app, [str(a) for a in args], env=env)


def test_text_report_snapshot(agent_project: Path) -> None:
    result = run("check", REL, env={"NO_COLOR": "1"})
    assert result.exit_code == 1, result.stderr
    assert "\x1b[" not in result.stdout
    assert_snapshot(
        "check-agent-project.txt", normalise(result.stdout, (agent_project, "<project>"))
    )


def test_json_report_snapshot(agent_project: Path) -> None:
    result = run("check", REL, "--format", "json")
    assert result.exit_code == 1, result.stderr
    assert result.stderr == ""  # machine formats: nothing but the report, no progress
    doc = json.loads(result.stdout)
    assert doc["schema"] == "agentguard.report/1"
    assert_snapshot(
        "check-agent-project.json", normalise(result.stdout, (agent_project, "<project>"))
    )


def test_sarif_report_snapshot_validates(agent_project: Path, sarif_schema: dict[str, Any]) -> None:
    out = agent_project.parent / "report.sarif"
    result = run("check", REL, "--format", "sarif", "--output", out)
    assert result.exit_code == 1, result.stderr
    assert result.stdout == ""
    doc = json.loads(out.read_text())
    assert_uploadable(doc, sarif_schema)
    # rules[] is checked against the registry in tests/test_sarif.py; the snapshot keeps
    # the run, so that adding a rule elsewhere does not rewrite this file
    run_ = doc["runs"][0]
    ids = [r["id"] for r in run_["tool"]["driver"]["rules"]]
    for res in run_["results"]:
        assert ids[res.pop("ruleIndex")] == res["ruleId"]
    run_["tool"]["driver"]["rules"] = "<every registered rule>"
    text = json.dumps(doc, indent=2) + "\n"
    assert_snapshot("check-agent-project.sarif", normalise(text, (agent_project, "<project>")))


# -- the exit-code table ---------------------------------------------------------------


def test_exit_0_when_nothing_active_reaches_fail_on(agent_project: Path) -> None:
    # the critical socket mount is accepted in the configuration (kept, marked suppressed)
    (agent_project / "agentguard.toml").write_text('[ignore]\nAG203 = ["compose.yaml:6"]\n')
    result = run("check", agent_project, "--fail-on", "critical", "--format", "json")
    assert result.exit_code == 0, result.stdout
    doc = json.loads(result.stdout)
    assert doc["complete"] is True
    assert doc["summary"]["by_severity"] == {"high": 1, "medium": 1, "low": 2}
    assert doc["summary"]["suppressed"] == 2
    suppressed = {f["rule_id"]: f["suppressed"] for f in doc["findings"] if f["suppressed"]}
    assert suppressed == {
        "AG203": f"config: {agent_project / 'agentguard.toml'}: ignore.AG203 = 'compose.yaml:6'",
        "AG212": "inline: Dockerfile:3",
    }


def test_exit_2_on_a_folder_with_nothing_to_check(tmp_path: Path) -> None:
    # an empty (or mistyped) folder: a gate that looked at nothing never passes
    result = run("check", tmp_path, "--format", "json")
    assert result.exit_code == 2
    assert result.stderr == (
        f"agentguard: error: {tmp_path}: nothing to check: no agent code or settings, "
        "Dockerfile, compose file, devcontainer or dependency declaration in it (is it the "
        "right folder?)\n"
    )


def test_exit_0_on_a_folder_with_a_clean_dockerfile(tmp_path: Path) -> None:
    (tmp_path / "Dockerfile").write_text("FROM scratch\nUSER 10001\n")
    result = run("check", tmp_path, "--format", "json")
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert doc["findings"] == []
    assert doc["sources"][0] == {
        "kind": "lock",
        "name": str(tmp_path),
        "status": "skipped",
        "reason": "no pyproject.toml [project] or requirements.in: no dependencies to check",
    }


def test_exit_1_on_a_finding_at_fail_on(agent_project: Path) -> None:
    result = run("check", agent_project, "--format", "json")
    assert result.exit_code == 1
    finding = json.loads(result.stdout)["findings"][0]
    del finding["fingerprint"]
    assert finding == {
        "rule_id": "AG203",
        "title": "Docker socket mounted or present",
        "severity": "critical",
        "confidence": "high",
        "message": "compose service agent mounts the Docker socket (/var/run/docker.sock -> "
        "/var/run/docker.sock): whoever reaches it is root on the host.",
        "locations": [{"path": "compose.yaml", "line": 6}],
        "evidence": finding["evidence"],
        "fix": {
            "description": "Remove the mount of /var/run/docker.sock; if the agent must run "
            "containers, give it a separate rootless engine or an API proxy that allows only "
            "the calls it needs.",
            "safe": False,
        },
        "ambiguous": False,
        "suppressed": None,
    }


def test_fail_on_comes_from_the_configuration(agent_project: Path) -> None:
    (agent_project / "agentguard.toml").write_text(
        'fail-on = "critical"\n[ignore]\nAG203 = ["compose.yaml"]\n'
    )
    assert run("check", agent_project).exit_code == 0
    assert run("check", agent_project, "--fail-on", "high").exit_code == 1  # the flag wins


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (
            "strict = true\n",
            "{f}: unknown key `strict` (known keys: policy, fail-on, disable, severity, "
            "ignore, rules, deps, build, min-release-age, exclude, context, context-severity, smoke, "
            "delta)",
        ),
        (
            '[severity]\nAG103 = "severe"\n',
            "{f}: severity.AG103: unknown severity 'severe' (expected one of: info, low, "
            "medium, high, critical)",
        ),
    ],
)
def test_exit_2_on_a_configuration_error(agent_project: Path, config: str, message: str) -> None:
    (agent_project / "agentguard.toml").write_text(config)
    result = run("check", agent_project)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert (
        result.stderr
        == "agentguard: error: " + message.format(f=agent_project / "agentguard.toml") + "\n"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("--fail-on", "severe"),
            "unknown severity 'severe' (expected one of: info, low, medium, high, critical)",
        ),
        (
            ("--baseline", "{p}/none.json"),
            "{p}/none.json: no such baseline (write one with --write-baseline {p}/none.json)",
        ),
    ],
)
def test_exit_2_on_a_bad_flag(agent_project: Path, args: tuple[str, ...], message: str) -> None:
    result = run("check", agent_project, *(a.format(p=agent_project) for a in args))
    assert result.exit_code == 2
    assert result.stderr == "agentguard: error: " + message.format(p=agent_project) + "\n"


def test_exit_3_when_a_source_failed_even_with_findings(agent_project: Path) -> None:
    (agent_project / "compose.yaml").unlink()
    result = run("check", agent_project, "--images-from-compose", "--format", "json")
    assert result.exit_code == 3
    doc = json.loads(result.stdout)
    assert doc["complete"] is False
    assert [s for s in doc["sources"] if s["status"] == "failed"] == [
        {
            "kind": "compose",
            "name": str(agent_project),
            "status": "failed",
            "reason": "--images-from-compose: no compose file (compose.yaml, compose.yml, "
            "docker-compose.yaml, docker-compose.yml)",
            "error_code": "compose-missing",
            "retryable": False,
            "remedy": "name the images with --image instead",
        }
    ]
    # the findings are still reported (without compose.yaml: no AG203/AG406/AG407)
    assert [f["rule_id"] for f in doc["findings"]] == ["AG103", "AG212", "AG401"]


def test_allow_incomplete_turns_3_back_into_the_findings_verdict(agent_project: Path) -> None:
    (agent_project / "compose.yaml").unlink()
    result = run("check", agent_project, "--images-from-compose", "--allow-incomplete")
    assert result.exit_code == 1
    assert "INCOMPLETE: a source failed" in result.stdout


def test_exit_3_text_names_the_failed_source(agent_project: Path) -> None:
    (agent_project / "compose.yaml").unlink()
    result = run("check", REL, "--images-from-compose", env={"NO_COLOR": "1"})
    assert result.exit_code == 3
    assert_snapshot("check-incomplete.txt", normalise(result.stdout, (agent_project, "<project>")))


def test_sarif_output_beside_text_for_ci(agent_project: Path, sarif_schema: dict[str, Any]) -> None:
    sarif = agent_project.parent / "agentguard.sarif"
    result = run("check", REL, "--sarif-output", sarif, env={"NO_COLOR": "1"})
    assert result.exit_code == 1
    assert result.stdout.startswith("agentguard ")  # people read the log, code scanning the file
    doc = json.loads(sarif.read_text())
    jsonschema.validate(doc, sarif_schema)
    assert [r["ruleId"] for r in doc["runs"][0]["results"]] == [
        "AG203",
        "AG103",
        "AG212",
        "AG401",
        "AG406",
        "AG407",
    ]


def _on_a_terminal(args: list[str], cwd: Path, **env: str) -> str:
    """Run the CLI with stdout and stderr on a pseudo-terminal; return what it drew."""
    import os
    import pty
    import subprocess
    import sys

    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-c", "from agentguard.cli import main; main()", *args],
        cwd=cwd,
        stdout=slave,
        stderr=slave,
        env={**{k: v for k, v in os.environ.items() if k != "NO_COLOR"}, **env},
    )
    os.close(slave)
    chunks: list[bytes] = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the pty closes when the process exits
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    assert proc.wait(timeout=60) == 1
    return b"".join(chunks).decode("utf-8", errors="replace")


def test_no_color_is_honoured_on_a_terminal(agent_project: Path) -> None:
    coloured = _on_a_terminal(["check", str(REL)], agent_project.parent, TERM="xterm")
    assert "\x1b[1;31m" in coloured or "\x1b[31m" in coloured  # a red severity
    plain = _on_a_terminal(["check", str(REL)], agent_project.parent, TERM="xterm", NO_COLOR="1")
    assert "AG203" in plain
    assert "\x1b[1;31m" not in plain and "\x1b[31m" not in plain


def test_fake_crash_in_one_step_is_a_failed_source_not_exit_1(
    agent_project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A fake: a bug inside the project scan cannot be caused on demand with real input.
    import agentguard.engine.project as project_scan

    def crash(path: Path, **_options: object) -> object:
        raise RuntimeError("scanner bug")

    monkeypatch.setattr(project_scan, "inspect_project", crash)
    result = run("check", REL, "--format", "json")
    assert result.exit_code == 3
    doc = json.loads(result.stdout)
    assert [s for s in doc["sources"] if s["status"] == "failed"] == [
        {
            "kind": "project",
            "name": "agent-project",
            "status": "failed",
            "reason": "agentguard failed in this step: RuntimeError: scanner bug",
            "error_code": "internal-error",
            "retryable": False,
            "remedy": "report it as a bug; the other steps' findings are still reported",
        }
    ]
    assert [f["rule_id"] for f in doc["findings"]] == ["AG103"]  # the lock step still ran
