"""`inspect` and `check` have a deadline for the whole run (`--timeout`): a run out of time
reports one failed source `deadline-exceeded` and exits 3, also under --allow-incomplete,
with no forked reader left behind and the process's timer and handler as they were."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentguard.cli import app
from agentguard.inspect.project import scan_read

PARENT = os.getpid()


def _slow_tree(root: Path, monkeypatch: pytest.MonkeyPatch, files: int = 40) -> None:
    for n in range(files):
        (root / f"m{n}.py").write_text(
            "from agents import Agent, ShellTool\nAgent(tools=[ShellTool()])\n"
        )
    real = scan_read.process_file

    def slow(*args: object, **kwargs: object) -> object:
        time.sleep(0.05)  # 40 files: 2 s in one process, far past the deadline
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(scan_read, "process_file", slow)


def _no_children_left() -> bool:
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


def _out_of_time(report: dict[str, object]) -> None:
    assert report["findings"] == []
    (source,) = report["sources"]  # type: ignore[misc]
    assert source["status"] == "failed" and source["error_code"] == "deadline-exceeded"
    assert "0.3 s" in source["reason"] and source["remedy"]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_inspect_out_of_time_reports_it_and_exits_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: str
) -> None:
    project = tmp_path / "p"
    project.mkdir()
    _slow_tree(project, monkeypatch)
    monkeypatch.setenv("AGENTGUARD_JOBS", jobs)
    out = tmp_path / "r.json"
    before = signal.getsignal(signal.SIGALRM)
    started = time.monotonic()
    result = CliRunner().invoke(
        app, ["inspect", str(project), "--timeout", "0.3", "--format", "json", "--output", str(out)]
    )
    assert result.exit_code == 3, result.output
    assert time.monotonic() - started < 1.5  # stopped at the deadline, not at the end
    _out_of_time(json.loads(out.read_text()))
    assert signal.getsignal(signal.SIGALRM) is before
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert _no_children_left()


def test_check_out_of_time_exits_3_even_when_incomplete_is_allowed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "p"
    project.mkdir()
    _slow_tree(project, monkeypatch)
    out, sarif = tmp_path / "r.json", tmp_path / "r.sarif"
    result = CliRunner().invoke(
        app,
        [
            "check",
            str(project),
            "--timeout",
            "0.3",
            "--allow-incomplete",
            "--format",
            "json",
            "--output",
            str(out),
            "--sarif-output",
            str(sarif),
        ],
    )
    assert result.exit_code == 3, result.output
    _out_of_time(json.loads(out.read_text()))
    runs = json.loads(sarif.read_text())["runs"]
    assert runs and runs[0]["results"] == []


def test_a_run_within_its_time_is_not_touched(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(
        "from agents import Agent, ShellTool\nAgent(tools=[ShellTool()])\n"
    )
    result = CliRunner().invoke(
        app, ["inspect", str(tmp_path), "--timeout", "60", "--format", "json"]
    )
    assert result.exit_code == 1, result.output  # the ShellTool finding, nothing failed
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
