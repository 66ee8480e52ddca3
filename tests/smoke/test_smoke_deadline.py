"""The smoke run is inside the run's --timeout: `lock --smoke --timeout N` ends by N with a
report, wherever the smoke run is (a probe whose import hangs, a stdio server that never
answers), and what the run's deadline cut short is a failed source naming --timeout
(exit 3, incomplete), never a finding about the lock, a skip or a clean smoke run.
`--smoke-timeout` below what is left still governs, as before. Real wheels from a local
folder, the real CLI in a subprocess (no network)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.report_schema import check_cli_output
from tests.smoke.packages import build_all, requirements_lock

DEADLINE = "deadline-exceeded"
MARGIN = 10.0  # a loaded 2-core machine: killing the children, writing the report
HANG = {"hang": {"command": "python", "args": ["-m", "hang_server"]}}
# the SDK imports mcp, whose 5.0.0 hangs at import; probe-servers holds the hanging server
PINS = ["claude-agent-sdk==1.0.0", "mcp==5.0.0", "probe-servers==1.0.0"]


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Path]]:
    out = tmp_path_factory.mktemp("wheels")
    return out, build_all(out)


def _project(root: Path, servers: dict[str, Any] | None = HANG) -> Path:
    """An agent whose code imports the SDK, its dependencies declared (lock resolves them)."""
    (root / "bot").mkdir(parents=True)
    (root / "bot" / "__init__.py").write_text("")
    (root / "bot" / "main.py").write_text("from claude_agent_sdk import create_sdk_mcp_server\n")
    deps = ", ".join(f'"{p}"' for p in PINS)
    (root / "pyproject.toml").write_text(
        '[project]\nname = "bot"\nversion = "0.1.0"\nrequires-python = ">=3.10"\n'
        f"dependencies = [{deps}]\n"
    )
    if servers:
        (root / ".mcp.json").write_text(json.dumps({"mcpServers": servers}, indent=2))
    return root


def _run(*args: str, timeout: float = 300) -> tuple[int, dict[str, Any], float, str]:
    """The CLI, timed from outside; the JSON report read from the file it wrote."""
    out = Path(args[-1]).parent / "report.json"
    argv = [sys.executable, "-m", "agentguard", *args, "--format", "json", "--output", str(out)]
    began = time.monotonic()
    proc = subprocess.run(
        argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
    )
    took = time.monotonic() - began
    check_cli_output(args, proc.stdout, None)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert out.is_file(), (proc.returncode, proc.stderr)  # the report is written
    return proc.returncode, json.loads(out.read_text()), took, proc.stderr


def _lock(root: Path, folder: Path, *args: str) -> tuple[int, dict[str, Any], float, str]:
    return _run("lock", "--no-index", "--find-links", str(folder), *args, str(root))


def _by(report: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(s["kind"], s["name"]): s for s in report["sources"]}


def _cut(source: dict[str, Any], timeout: str) -> None:
    """Failed by the run's deadline, and saying so."""
    assert (source["status"], source["error_code"]) == ("failed", DEADLINE), source
    assert f"the run's deadline ({timeout}" in source["reason"], source
    assert "--timeout" in source["reason"] and "--timeout" in source["remedy"], source
    assert source["retryable"] is True


def _smoke_findings(report: dict[str, Any]) -> list[str]:
    return [f["rule_id"] for f in report["findings"] if f["rule_id"].startswith("AG6")]


def _ended_by(
    ran: tuple[int, dict[str, Any], float, str], timeout: str, *parts: tuple[str, str]
) -> dict[tuple[str, str], dict[str, Any]]:
    """A `lock` run ended by its --timeout (``timeout`` seconds, as written): on time, exit
    3, each of ``parts`` a failed source naming the deadline, no AG6xx finding (the run
    ended them, the lock did not); its sources by (kind, name)."""
    code, report, took, stderr = ran
    assert took < float(timeout) + MARGIN, took  # not the smoke run's own 900 s
    assert code == 3, stderr
    assert report["complete"] is False
    by = _by(report)
    for part in parts:
        _cut(by[part], f"{timeout} s, --timeout")
    assert _smoke_findings(report) == []
    return by


def test_a_hanging_probe_and_server_end_at_the_runs_timeout(
    tmp_path: Path, wheels: tuple[Path, dict[str, Path]]
) -> None:
    folder, _ = wheels
    root = _project(tmp_path / "p")
    ran = _lock(root, folder, "--smoke", "--timeout", "12")
    hang = ("mcp-server", "hang (.mcp.json)")
    by = _ended_by(ran, "12", ("smoke", "import claude_agent_sdk"), hang)
    assert (root / "requirements.lock").is_file()  # the lock was written, then installed
    assert by[("smoke", "install")]["status"] == "ok"
    assert "stopped waiting for its answer to initialize" in by[hang]["reason"]
    # no probe of what the run ended is reported as the lock's behaviour
    assert ran[1]["facts"]["smoke"]["probes"] == []


def test_the_smoke_timeout_below_what_is_left_still_governs(
    tmp_path: Path, wheels: tuple[Path, dict[str, Path]]
) -> None:
    folder, _ = wheels
    root = _project(tmp_path / "p")
    code, report, took, stderr = _lock(
        root, folder, "--smoke", "--timeout", "300", "--smoke-timeout", "8"
    )
    assert took < 8 + 30 + MARGIN, took  # the lock, then 8 s of smoke run
    assert [s for s in report["sources"] if s.get("error_code") == DEADLINE] == []
    by_subject = {p["subject"]: p for p in report["facts"]["smoke"]["probes"]}
    # a hang past the smoke run's own deadline is the package's failure, as it always was
    assert by_subject["claude_agent_sdk"]["status"] == "failed"
    assert "did not finish within" in by_subject["claude_agent_sdk"]["detail"]
    assert by_subject["hang"]["status"] == "failed"
    assert "did not answer initialize within" in by_subject["hang"]["detail"]
    assert {"AG602", "AG604"} <= set(_smoke_findings(report)), report["findings"]
    assert code == 1, stderr


def test_smoke_from_a_config_file_is_inside_the_timeout_too(
    tmp_path: Path, wheels: tuple[Path, dict[str, Path]]
) -> None:
    folder, _ = wheels
    root = _project(tmp_path / "p", servers=None)
    ci = tmp_path / "ci.toml"
    ci.write_text("smoke = true\n")
    ran = _lock(root, folder, "--config", str(ci), "--timeout", "10")
    _ended_by(ran, "10", ("smoke", "import claude_agent_sdk"))


def test_a_smoke_run_the_deadline_left_no_time_fails_and_says_why(
    tmp_path: Path, wheels: tuple[Path, dict[str, Path]]
) -> None:
    folder, _ = wheels
    root = _project(tmp_path / "p")
    # (the lock takes longer than that, or all of it: the smoke run finds no time left)
    ran = _lock(root, folder, "--smoke", "--timeout", "0.1")
    whole = ("smoke", "smoke run")
    parts = (whole, ("smoke", "import claude_agent_sdk"), ("mcp-server", "hang (.mcp.json)"))
    by = _ended_by(ran, "0.1", *parts)
    assert by[whole]["reason"].startswith("not started: ")
    assert not [s for s in ran[1]["sources"] if s["kind"] in ("smoke", "mcp-server")
                and s["status"] != "failed"]  # fmt: skip


def test_check_smoke_ends_at_its_share_of_the_timeout_with_the_other_steps_reported(
    tmp_path: Path, wheels: tuple[Path, dict[str, Path]]
) -> None:
    folder, built = wheels
    root = _project(tmp_path / "p")
    lock = requirements_lock(built, PINS)  # the lock names its index, as a deployment reads it
    (root / "requirements.lock").write_text(f"--no-index\n--find-links {folder}\n{lock}")
    code, report, took, stderr = _run("check", "--smoke", "--timeout", "12", str(root))
    assert took < 12 + MARGIN, took
    assert code == 3, stderr
    by = _by(report)
    # the smoke step ended by 80% of --timeout: the run's own timer, which reports nothing
    # of what the steps found, did not have to fire
    assert ("run", str(root)) not in by
    share = "9.6 s of --timeout 12, the rest kept to report the other steps"
    _cut(by[("smoke", "import claude_agent_sdk")], share)
    _cut(by[("mcp-server", "hang (.mcp.json)")], share)
    assert _smoke_findings(report) == []
    assert set(report["facts"]["steps"]) >= {"smoke"}


def _children(pid: int) -> dict[int, str]:
    """The processes whose parent is ``pid`` (Linux), with their command lines."""
    out = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, ValueError, IndexError):
            continue
        if ppid == pid:
            out[int(entry.name)] = cmd
    return out


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
def test_ctrl_c_ends_the_smoke_run_and_its_children_at_once(
    tmp_path: Path, wheels: tuple[Path, dict[str, Path]]
) -> None:
    folder, _ = wheels
    root = _project(tmp_path / "p")
    argv = [sys.executable, "-m", "agentguard", "lock", "--no-index", "--find-links",
            str(folder), "--smoke", "--timeout", "300", str(root)]  # fmt: skip
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    kids: dict[int, str] = {}
    try:
        waited = time.monotonic() + 120
        while time.monotonic() < waited:  # until both hang: the probe child and the server
            kids = _children(proc.pid)
            if sum("probe_child.py" in c or "hang_server" in c for c in kids.values()) == 2:
                break
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.2)
        else:
            pytest.fail(f"the smoke run did not start its children: {_children(proc.pid)}")
        began = time.monotonic()
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)
        took = time.monotonic() - began
    finally:
        if proc.poll() is None:  # (this test failed: its children are not left running)
            proc.kill()
            proc.communicate()
            for pid in kids:
                with contextlib.suppress(OSError):
                    os.killpg(pid, signal.SIGKILL)
    assert proc.returncode == 130
    assert took < MARGIN, took  # not each child's deadline (the run's 300 s)
    for pid in kids:
        assert (
            not Path(f"/proc/{pid}").exists()
            or "zombie" in Path(f"/proc/{pid}/status").read_text().lower()
        ), kids
