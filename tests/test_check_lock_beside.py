"""`check` runs its lock step beside the project scan: in this process, while forked
children read a large folder (or before the scan, with one job), exactly once, and its
result is reported as when the two ran one after the other."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentguard import check
from agentguard.check import CheckOptions, run_check
from agentguard.config import load_config
from agentguard.inspect.project.scan import collect_folder


def _tree(root: Path, files: int = 60) -> None:
    (root / "pyproject.toml").write_text(
        '[project]\nname = "demo"\nversion = "1"\ndependencies = ["mcp>=1.0"]\n'
    )
    for n in range(files):
        (root / f"m{n}.py").write_text(f"from agents import Agent\nAgent(name='a{n}')\n")


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_beside_runs_once_in_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: str
) -> None:
    _tree(tmp_path)
    monkeypatch.setenv("AGENTGUARD_JOBS", jobs)
    calls: list[int] = []
    col = collect_folder(tmp_path, beside=lambda: calls.append(os.getpid()))
    assert calls == [os.getpid()]
    assert col.files_read >= 61  # the scan itself still read every file


def test_the_lock_step_is_reported_first_and_once_whatever_the_jobs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tree(tmp_path)
    ran: list[int] = []
    real = check.lock_step

    def counted(*args: object, **kwargs: object) -> check.StepResult:
        ran.append(os.getpid())
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(check, "lock_step", counted)
    reports = []
    for jobs in ("1", "2"):
        monkeypatch.setenv("AGENTGUARD_JOBS", jobs)
        reports.append(run_check(CheckOptions(project=tmp_path)).report)
    assert ran == [os.getpid(), os.getpid()]
    one, two = ([(s.kind, s.name, s.status) for s in r.sources] for r in reports)
    alone = [(s.kind, s.name, s.status) for s in real(tmp_path, load_config(tmp_path).deps).sources]
    assert one == two and one[: len(alone)] == alone  # the lock step's sources come first
    assert sorted(f.rule_id for f in reports[0].findings) == sorted(
        f.rule_id for f in reports[1].findings
    )
