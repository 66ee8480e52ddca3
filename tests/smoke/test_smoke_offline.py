"""The smoke run on small real wheels built here (a local folder index, no network): the
SDK crashes at import, at server construction and at tools/list, or starts; stdio MCP
servers answer, hang past the deadline, exit, or need a key they are not given."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agentguard.findings import Confidence, Finding, Fix, Location, Severity, SourceStatus
from agentguard.smoke.facts import Crossing
from agentguard.smoke.install import Options
from agentguard.smoke.run import SmokeOptions, smoke_run
from agentguard.smoke.step import smoke_step
from tests.smoke.packages import build_all, requirements_lock

BOT = """\
from claude_agent_sdk import create_sdk_mcp_server, tool


@tool("t", "a tool", {})
async def t(args):
    return {}


server = create_sdk_mcp_server(name="tasks", tools=[t])
"""


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Path]]:
    out = tmp_path_factory.mktemp("wheels")
    return out, build_all(out)


def _project(
    tmp: Path, wheels: dict[str, Path], pins: list[str], mcp_json: dict | None = None
) -> Path:
    root = tmp / "project"
    (root / "bot").mkdir(parents=True)
    (root / "bot" / "__init__.py").write_text("")
    (root / "bot" / "main.py").write_text(BOT)
    (root / "requirements.lock").write_text(requirements_lock(wheels, pins))
    if mcp_json is not None:
        (root / ".mcp.json").write_text(json.dumps({"mcpServers": mcp_json}, indent=2))
    return root


def _opts(folder: Path, server_timeout: float = 20.0) -> SmokeOptions:
    return SmokeOptions(
        index=Options(find_links=(str(folder),), no_index=True),
        timeout=120.0,
        server_timeout=server_timeout,
    )


SDK = ["claude-agent-sdk==1.0.0"]
CROSSING = Crossing(
    package="mcp",
    locked=("2.0.0",),
    parent="claude-agent-sdk",
    parent_version="1.0.0",
    majors=("1", "2"),
    fix="Add `mcp>=1.0,<2` to your requirements: later releases declare mcp<2. Or `mcp>=2.0,<3` (the locked major) once tested.",
    snippet="mcp>=1.0,<2",
)


def _where(line: int, subject: str = "sdk-server claude_agent_sdk") -> tuple[Location, ...]:
    return (Location(path="bot/main.py", line=line, note=f"smoke: {subject}"),)


def test_server_construction_crash_is_explained_by_the_crossed_major(
    tmp_path: Path, wheels: tuple[Path, dict[str, Path]]
) -> None:
    folder, built = wheels
    root = _project(tmp_path, built, [*SDK, "mcp==2.0.0"])
    step = smoke_step(root, _opts(folder), [])
    # without the lock's AG101 crossing: the crash, and a fix that does not guess
    facts, _ = smoke_run(root, None, _opts(folder), (CROSSING,))
    from agentguard.engine import run_smoke_rules

    assert [f.rule_id for f in step.findings] == ["AG603"]
    crash_msg = (
        "In the locked environment, `create_sdk_mcp_server()` of claude-agent-sdk 1.0.0 raises "
        "AttributeError: 'Server' object has no attribute 'list_tools' at "
        "claude_agent_sdk/__init__.py:21 (`@server.list_tools()`)."
    )
    assert step.findings[0].message == crash_msg + (
        " mcp 2.0.0 has no `Server.list_tools`, which claude-agent-sdk 1.0.0 calls."
    )
    explained = run_smoke_rules(facts)
    assert explained == [
        Finding(
            rule_id="AG603",
            title="An in-process MCP server does not start in the locked environment",
            severity=Severity.HIGH,
            confidence=Confidence.HIGH,
            message=crash_msg
            + " mcp 2.0.0 removed `Server.list_tools`, which claude-agent-sdk 1.0.0 calls."
            " The lock takes mcp 2.0.0 through a range of claude-agent-sdk 1.0.0 that admits"
            " majors 1, 2 (AG101).",
            locations=_where(9),
            fix=Fix(
                "Add `mcp>=1.0,<2` to your requirements: later releases declare mcp<2. "
                "Then re-lock and run `--smoke` again.",
                snippet="mcp>=1.0,<2",
            ),
            evidence=explained[0].evidence,
        )
    ]
    ev = explained[0].evidence
    assert ev["stage"] == "construct"
    assert ev["crash"]["owner"] == "mcp.server.lowlevel.server.Server"
    assert (ev["crash"]["owner_package"], ev["crash"]["owner_version"]) == ("mcp", "2.0.0")
    assert (ev["crash"]["frame_package"], ev["crash"]["frame_version"]) == (
        "claude-agent-sdk",
        "1.0.0",
    )


def test_import_crash(tmp_path: Path, wheels: tuple[Path, dict[str, Path]]) -> None:
    folder, built = wheels
    root = _project(tmp_path, built, [*SDK, "mcp==4.0.0"])
    step = smoke_step(root, _opts(folder), [])
    rules = [f.rule_id for f in step.findings]
    assert rules == ["AG602", "AG603"]  # the import, and the server that needs it
    imp = step.findings[0]
    assert imp.message == (
        "In the locked environment, importing `claude_agent_sdk` of claude-agent-sdk 1.0.0 "
        "raises ImportError: cannot import name 'McpError' from 'mcp' "
        f"({imp.evidence['crash']['message'].split('(', 1)[1]} at claude_agent_sdk/__init__.py:1 "
        "(`from mcp import McpError`)."
    )
    assert imp.locations == (
        Location(path="bot/main.py", line=1, note="smoke: import claude_agent_sdk"),
    )


def test_tools_list_crash(tmp_path: Path, wheels: tuple[Path, dict[str, Path]]) -> None:
    folder, built = wheels
    root = _project(tmp_path, built, [*SDK, "mcp==3.0.0"])
    step = smoke_step(root, _opts(folder), [])
    assert [(f.rule_id, f.evidence["stage"]) for f in step.findings] == [("AG603", "list-tools")]
    assert step.findings[0].message == (
        "In the locked environment, `create_sdk_mcp_server()` (listing its tools) of "
        "claude-agent-sdk 1.0.0 raises AttributeError: 'ServerResult' object has no attribute "
        "'root' at claude_agent_sdk/_internal/query.py:12 (`tools = [{\"name\": t.name} for t in "
        "result.root.tools]`). mcp 3.0.0 has no `ServerResult.root`, which claude-agent-sdk "
        "1.0.0 calls."
    )


def test_working_stack_lists_the_probe_tool_and_the_stdio_servers(
    tmp_path: Path, wheels: tuple[Path, dict[str, Path]]
) -> None:
    folder, built = wheels
    servers = {
        "good": {"command": "python", "args": ["-m", "good_server"]},
        "hang": {"command": "python", "args": ["-m", "hang_server"]},
        "gone": {"command": "python", "args": ["-m", "exit_server"]},
        "keyed": {
            "command": "python",
            "args": ["-m", "creds_server"],
            "env": {"TRACKER_TOKEN": "${TRACKER_TOKEN}"},
        },
        "own": {"command": "python", "args": ["-m", "bot.main"]},
        "box": {"command": "docker", "args": ["run", "-i", "img"]},
        "fake": {"command": "./tools/npx", "args": ["-y", "srv"]},
        "ghost": {
            "command": "uvx",
            "args": ["--no-index", "--find-links", str(folder), "agentguard-no-such-server"],
        },
    }
    root = _project(tmp_path, built, [*SDK, "mcp==1.0.0", "probe-servers==1.0.0"], servers)
    facts, sources = smoke_run(root, None, _opts(folder, server_timeout=4.0))
    by = {p.subject: p for p in facts.probes if p.kind == "stdio"}
    imported = next(p for p in facts.probes if p.kind == "import")
    assert (imported.status, imported.detail) == (
        "ok",
        "imported claude_agent_sdk (create_sdk_mcp_server, tool)",
    )
    sdk = next(p for p in facts.probes if p.kind == "sdk-server")
    assert (sdk.status, sdk.tools) == ("ok", ("agentguard_probe",))
    assert "through claude_agent_sdk's own MCP router" in sdk.detail
    assert (by["good"].status, by["good"].tools, by["good"].version) == (
        "ok",
        ("lookup", "search"),
        "1.0.0",
    )
    assert (by["hang"].status, by["hang"].detail) == (
        "failed",
        "it did not answer initialize within 4 s",
    )
    assert (by["gone"].status, by["gone"].detail) == (
        "failed",
        "it exited with status 3 before answering initialize",
    )
    assert by["gone"].output == ("ModuleNotFoundError: no module named fancy",)
    assert by["keyed"].status == "needs-credentials"
    # what a server prints is redacted before it is kept
    assert by["keyed"].output == (
        "error: TRACKER_TOKEN is not set (the cached one, REDACTED, expired)",
    )
    skipped = {s.name: s.reason for s in sources if s.status is SourceStatus.SKIPPED}
    assert skipped["keyed (.mcp.json)"] == (
        "needs credentials: its configuration declares TRACKER_TOKEN; the smoke run passes no "
        "secret, and it did not start without one"
    )
    assert skipped["own (.mcp.json)"] == (
        "not started: `python -m bot.main` runs the project's own code, which the smoke run does not start"
    )
    assert skipped["box (.mcp.json)"].startswith("not started: it starts a container")
    assert skipped["fake (.mcp.json)"] == (
        "not started: `./tools/npx` is a path, not the `npx` launcher on PATH"
    )
    from agentguard.engine import run_smoke_rules

    assert (by["ghost"].status, by["ghost"].package, by["ghost"].output) == (
        "not-in-registry",
        "agentguard-no-such-server",
        (
            "error: No solution found when resolving tool dependencies",
            "  cause: Because agentguard-no-such-server was not found in the provided package "
            "locations and you require agentguard-no-such-server, we can conclude that your "
            "requirements are unsatisfiable.",
        ),
    )
    found = sorted((f.rule_id, f.message) for f in run_smoke_rules(facts))
    assert found == [
        (
            "AG604",
            "MCP server 'gone' (its command) does not start: it exited with status 3 before answering initialize.",
        ),
        (
            "AG604",
            "MCP server 'hang' (its command) does not start: it did not answer initialize within 4 s.",
        ),
        (
            "AG605",
            "MCP server 'ghost': no registry holds its package agentguard-no-such-server; it cannot "
            "start from the public registry, and anyone may publish that name.",
        ),
    ]


def test_a_server_gets_none_of_the_callers_environment(
    tmp_path: Path, wheels: tuple[Path, dict[str, Path]], monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentguard.smoke.proc import child_env

    monkeypatch.setenv("GITHUB_TOKEN", "ghp_" + "x" * 36)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "s" * 40)
    env = child_env(str(tmp_path))
    assert "GITHUB_TOKEN" not in env and "AWS_SECRET_ACCESS_KEY" not in env
    assert env["HOME"] == str(tmp_path / "home")
    assert set(env) <= {
        "PATH",
        "HOME",
        "TMPDIR",
        "LANG",
        "LC_ALL",
        "LC_CTYPE",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
        "NODE_EXTRA_CA_CERTS",
    }


def test_no_lock_is_a_skipped_source_not_a_pass(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    (root / "bot.py").write_text(BOT)
    facts, sources = smoke_run(root, None, SmokeOptions(timeout=30))
    assert facts.install is None and facts.probes == ()
    assert [(s.name, s.status, s.reason) for s in sources] == [
        (
            "install",
            SourceStatus.SKIPPED,
            "no lock to install: requirements.lock is absent (run `agentguard lock`)",
        ),
        (
            "agent code",
            SourceStatus.SKIPPED,
            "the lock was not installed: 2 import/server probe(s) not tried",
        ),
    ]


def test_an_import_that_hangs_meets_the_deadline(
    tmp_path: Path, wheels: tuple[Path, dict[str, Path]]
) -> None:
    folder, built = wheels
    root = _project(tmp_path, built, [*SDK, "mcp==5.0.0"])
    opts = SmokeOptions(
        index=Options(find_links=(str(folder),), no_index=True), timeout=120, probe_timeout=6
    )
    facts, _ = smoke_run(root, None, opts)
    assert [(p.kind, p.status, p.detail) for p in facts.probes] == [
        ("import", "failed", "the probe did not finish within 6 s"),
        (
            "sdk-server",
            "failed",
            "the scratch interpreter ended without running the probe (deadline)",
        ),
    ]


def test_an_interpreter_killed_at_start_is_a_failure_not_a_pass(
    tmp_path: Path, wheels: tuple[Path, dict[str, Path]]
) -> None:
    folder, built = wheels
    root = _project(tmp_path, built, [*SDK, "mcp==1.0.0", "startup-killer==1.0.0"])
    facts, _ = smoke_run(root, None, _opts(folder))
    assert [(p.kind, p.status, p.detail) for p in facts.probes] == [
        ("import", "failed", "the scratch interpreter ended without running the probe (status 7)"),
        (
            "sdk-server",
            "failed",
            "the scratch interpreter ended without running the probe (status 7)",
        ),
    ]


def test_a_lock_whose_hash_does_not_match_does_not_install(
    tmp_path: Path, wheels: tuple[Path, dict[str, Path]]
) -> None:
    folder, built = wheels
    root = _project(tmp_path, built, [*SDK, "mcp==1.0.0"])
    lock = root / "requirements.lock"
    lock.write_text(re.sub(r"sha256:[0-9a-f]{64}", "sha256:" + "0" * 64, lock.read_text(), count=1))
    step = smoke_step(root, _opts(folder), [])
    [finding] = step.findings
    assert (finding.rule_id, finding.severity, finding.locations) == (
        "AG601",
        Severity.HIGH,
        (Location(path="requirements.lock", note="smoke: install"),),
    )
    assert finding.message.startswith("requirements.lock does not install into a fresh Python ")
    assert "hash" in finding.message.lower()
    assert finding.fix.description == (
        "Re-lock (`agentguard lock`) and commit both lock files; then run `--smoke` again."
    )


def test_check_smoke_runs_the_smoke_step_and_gates_on_it(
    tmp_path: Path, wheels: tuple[Path, dict[str, Path]]
) -> None:
    from tests.lock.helpers import run_json

    folder, built = wheels
    root = _project(tmp_path, built, [*SDK, "mcp==2.0.0"])
    lock = root / "requirements.lock"  # the lock names its own index, as a deployment reads it
    lock.write_text(f"--no-index\n--find-links {folder}\n" + lock.read_text())
    code, report, _ = run_json("check", "--smoke", str(root))
    assert code == 1
    assert [f["rule_id"] for f in report["findings"] if f["rule_id"].startswith("AG6")] == ["AG603"]
    smoke = report["facts"]["steps"]["smoke"]
    assert [(p["kind"], p["status"]) for p in smoke["probes"]] == [
        ("import", "ok"),
        ("sdk-server", "failed"),
    ]
    code, report, _ = run_json("check", str(root))  # not asked: nothing runs
    assert "smoke" not in report["facts"]["steps"]
    assert not [f for f in report["findings"] if f["rule_id"].startswith("AG6")]
