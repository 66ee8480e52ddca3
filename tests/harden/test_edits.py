"""User edits are never lost, a failed input writes nothing, the agent-start and egress
verdicts (AG501), and the hardened devcontainer.json (no engine)."""

from __future__ import annotations

import json
from pathlib import Path

from agentguard.harden.output import digest
from agentguard.harden.probe_facts import AgentRun, Expected, Inside, Observation
from agentguard.rules.runtime_start import check_agent_run, check_egress
from tests.harden.support import FIXTURES, harden_cli, json_report, written_text

CASE = FIXTURES / "AG403" / "fail" / "compose-privileged"


def _manifest(out: Path) -> dict[str, str]:
    return dict(json.loads((out / ".agentguard-harden.json").read_text())["files"])


def _outputs(report: dict[str, object]) -> dict[str, str]:
    return {
        Path(s["name"]).name: s["reason"]
        for s in report["sources"]  # type: ignore[attr-defined]
        if s["kind"] == "output"
    }


def test_an_edited_file_is_kept_and_the_new_one_written_beside_it(tmp_path: Path) -> None:
    out = tmp_path / "o"
    assert harden_cli(CASE, "--out", out, "--quiet").exit_code == 0
    first = _manifest(out)["docker-run.sh"]
    script = out / "docker-run.sh"
    mine = script.read_text().replace("--memory 1g", "--memory 2g")
    script.write_text(mine)

    report = json_report(harden_cli(CASE, "--out", out, "--format", "json"))
    assert script.read_text() == mine
    assert (out / "docker-run.sh.new").read_text() == mine.replace("--memory 2g", "--memory 1g")
    assert _outputs(report)["docker-run.sh.new"].endswith(
        "bytes written beside docker-run.sh, which was changed since harden wrote it and is "
        "kept (--force replaces it)"
    )
    # the record still names what harden wrote, so the edit is seen again next time
    assert _manifest(out)["docker-run.sh"] == first
    assert harden_cli(CASE, "--out", out, "--quiet").exit_code == 0
    assert script.read_text() == mine

    assert harden_cli(CASE, "--out", out, "--quiet", "--force").exit_code == 0
    assert "--memory 1g" in script.read_text()
    assert not (out / "docker-run.sh.new").exists()
    assert _manifest(out)["docker-run.sh"] == digest(script.read_bytes())


def test_a_file_harden_did_not_write_is_not_overwritten(tmp_path: Path) -> None:
    out = tmp_path / "o"
    out.mkdir()
    (out / "docker-run.sh").write_text("#!/bin/sh\necho mine\n")
    assert harden_cli(CASE, "--out", out, "--quiet").exit_code == 0
    assert (out / "docker-run.sh").read_text() == "#!/bin/sh\necho mine\n"
    assert (out / "docker-run.sh.new").read_text().startswith("#!/bin/sh\n# agentguard harden")


def test_a_stale_file_the_user_changed_is_kept(tmp_path: Path) -> None:
    out = tmp_path / "o"
    agent = FIXTURES / "AG305" / "fail" / "py-bypass-in-repo"
    assert harden_cli(agent, "--out", out, "--quiet").exit_code == 0
    snippet = out / "agent" / "agent_hardened.py"
    snippet.write_text(snippet.read_text() + "# reviewed\n")
    report = json_report(harden_cli(CASE, "--out", out, "--format", "json"))
    assert snippet.read_text().endswith("# reviewed\n")
    assert _outputs(report)["agent_hardened.py"] == "changed since harden wrote it: kept"


def test_a_failed_input_writes_nothing_and_exits_3(tmp_path: Path) -> None:
    proj = tmp_path / "p"
    proj.mkdir()
    (proj / "compose.yaml").write_text("services:\n  agent: [unclosed\n")
    out = tmp_path / "o"
    result = harden_cli(proj, "--out", out, "--format", "json")
    assert result.exit_code == 3, result.stdout
    report = json_report(result)
    assert not out.exists()
    assert report["facts"]["harden"]["files"] == []
    [skipped] = [s for s in report["sources"] if s["kind"] == "output"]
    assert skipped["status"] == "skipped"
    assert skipped["reason"].startswith("nothing written: 1 input(s) failed (compose.yaml: ")
    assert "nothing written" in " ".join(report["notes"])


def _run(**fields: object) -> AgentRun:
    base: dict[str, object] = {"script": "docker-run.sh", "image": "agent:1", "settle": 5.0}
    return AgentRun(**{**base, **fields})  # type: ignore[arg-type]


def test_an_agent_that_cannot_start_is_ag501_naming_the_cause() -> None:
    v = check_agent_run(
        _run(
            state="exited",
            exit_code=1,
            tail=(
                "Traceback (most recent call last):",
                "ModuleNotFoundError: No module named 'bot'",
            ),
        )
    )
    assert v.status == "violated"
    assert v.finding is not None
    assert v.finding.to_json() | {"fingerprint": None} == {
        "rule_id": "AG501",
        "title": "Hardened configuration does not hold at run time",
        "severity": "high",
        "confidence": "high",
        "message": "The hardened configuration does not hold at run time: probe agent-start: the "
        "agent cannot start: it exited 1: ModuleNotFoundError: No module named 'bot'.",
        "locations": [{"path": "docker-run.sh", "note": "probe agent-start"}],
        "evidence": {
            "probe": "agent-start",
            "image": "agent:1",
            "state": "exited",
            "exit_code": 1,
            "output": [
                "Traceback (most recent call last):",
                "ModuleNotFoundError: No module named 'bot'",
            ],
        },
        "fix": {
            "description": "Make the hardened configuration start the agent: the code it runs "
            "must be outside the empty working directory (the hardened Dockerfile or "
            "`--code-mount` carries it), its command must name it (absolute paths, `PYTHONPATH` "
            "for `python -m`), and nothing it needs may write to the read-only root (use /tmp "
            "or the working directory). Then run `agentguard harden --verify` on docker-run.sh "
            "again.",
            "safe": False,
        },
        "ambiguous": False,
        "suppressed": None,
        "fingerprint": None,
    }
    built = check_agent_run(_run(state="not-built", error="COPY failed: no source files"))
    assert built.detail == (
        "the agent cannot start: the hardened image does not build: COPY failed: no source files"
    )


def test_an_agent_starts_when_running_exited_0_or_its_check_passes() -> None:
    assert check_agent_run(_run(state="running")).detail == "the agent is still running after 5s"
    assert check_agent_run(_run(state="exited", exit_code=0)).status == "held"
    ok = check_agent_run(_run(state="running", command="curl -f localhost", command_exit=0))
    assert (ok.status, ok.detail) == (
        "held",
        "the agent is still running after 5s and `curl -f localhost` exited 0",
    )
    bad = check_agent_run(
        _run(state="running", command="check", command_exit=1, command_output=("not ready",))
    )
    assert bad.status == "violated"
    assert bad.detail == "the agent is still running after 5s, but `check` exited 1: not ready"


def _obs(egress: tuple[tuple[str, str], ...] | None) -> Observation:
    inside = Inside(None, None, None, None, None, None, None, None, None, None, True, egress)
    return Observation("c" * 64, "agent:1", "docker-run.sh", inside, None)


def _expected(network: str = "none") -> Expected:
    targets = (("192.0.2.2", 4000, "IPv4, this host"), ("fd00::2", 4000, "IPv6, this host"))
    return Expected("/work", network, ("/work",), (), (), None, targets)


def test_egress_with_network_none_fails_for_ipv4_and_ipv6() -> None:
    held = check_egress(_obs((("192.0.2.2", "blocked"), ("fd00::2", "blocked"))), _expected())
    assert held is not None
    assert (held.status, held.detail) == (
        "held",
        "no connection from inside to 192.0.2.2:4000 (IPv4, this host), fd00::2:4000 (IPv6, "
        "this host)",
    )
    opened = check_egress(_obs((("192.0.2.2", "blocked"), ("fd00::2", "open"))), _expected())
    assert opened is not None and opened.finding is not None
    assert opened.finding.evidence["reached"] == ["fd00::2:4000 (IPv6, this host)"]
    undecided = check_egress(
        _obs((("192.0.2.2", "undecided"), ("fd00::2", "blocked"))), _expected()
    )
    assert undecided is not None
    assert (undecided.status, undecided.detail) == (
        "unknown",
        "not verified: no answer for 192.0.2.2",
    )
    assert check_egress(_obs(None), _expected("agents")) is None


def test_the_hardened_devcontainer_keeps_nothing_the_findings_were_about(tmp_path: Path) -> None:
    proj = tmp_path / "p"
    (proj / ".devcontainer").mkdir(parents=True)
    (proj / ".devcontainer" / "devcontainer.json").write_text(
        """{
  // an agent playground
  "name": "bot",
  "build": {"dockerfile": "Dockerfile", "context": ".."},
  "workspaceMount": "source=${localWorkspaceFolder},target=/workspace,type=bind",
  "workspaceFolder": "/workspace",
  "remoteUser": "root",
  "privileged": true,
  "capAdd": ["SYS_ADMIN"],
  "features": {
    "ghcr.io/devcontainers/features/docker-outside-of-docker:1": {},
    "ghcr.io/devcontainers/features/node:1": {}
  },
  "containerEnv": {"SLACK_BOT_TOKEN": "xoxb-0123456789-abcdefghij", "MODE": "dev",
                   "OPENAI_API_KEY": "${localEnv:OPENAI_API_KEY}"},
  "runArgs": ["--env", "DB_PASSWORD=swordfish-2024", "--network=host"],
  "postCreateCommand": "pip install -e ."
}
"""
    )
    (proj / ".devcontainer" / "Dockerfile").write_text("FROM scratch\n")
    out = tmp_path / "o"
    result = harden_cli(proj, "--out", out, "--format", "json")
    text = (out / ".devcontainer" / "devcontainer.json").read_text()
    body = json.loads("".join(line for line in text.splitlines(True) if not line.startswith("//")))
    assert body == {
        "name": "bot",
        "build": {"dockerfile": "../../p/.devcontainer/Dockerfile", "context": "../../p"},
        "features": {"ghcr.io/devcontainers/features/node:1": {}},
        "postCreateCommand": "pip install -e .",
        "workspaceMount": "type=tmpfs,target=/work,tmpfs-mode=1777",
        "workspaceFolder": "/work",
        "containerUser": "10001:10001",
        "remoteUser": "10001:10001",
        "runArgs": [
            "--read-only",
            "--tmpfs=/tmp:rw,nosuid,nodev,size=64m,mode=1777",
            "--cap-drop=ALL",
            "--security-opt=no-new-privileges:true",
            "--network=none",
            "--memory=1g",
            "--pids-limit=256",
        ],
        "containerEnv": {
            "HOME": "/tmp",
            "DB_PASSWORD": "${localEnv:DB_PASSWORD}",
            "OPENAI_API_KEY": "${localEnv:OPENAI_API_KEY}",
            "SLACK_BOT_TOKEN": "${localEnv:SLACK_BOT_TOKEN}",
            "MODE": "dev",
        },
    }
    written = written_text(out)
    assert "swordfish" not in written and "xoxb-" not in written
    report = json_report(result)
    fixed = {f["rule_id"] for f in report["findings"] if f["suppressed"]}
    assert {"AG202", "AG203", "AG401", "AG402", "AG403", "AG404", "AG405"} <= fixed
    again = json_report(harden_cli(out, "--out", tmp_path / "o2", "--format", "json"))
    assert {f["rule_id"] for f in again["findings"]} & fixed == set()
