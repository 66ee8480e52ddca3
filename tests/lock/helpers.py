"""Running the real CLI in a subprocess, the way a user or a pipeline does."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.report_schema import check_cli_output


def run_cli(
    *args: str, cwd: Path | None = None, timeout: float = 300, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "agentguard", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    check_cli_output(args, proc.stdout, cwd)
    return proc


def run_json(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> tuple[int, dict[str, Any], str]:
    proc = run_cli(*args, "--format", "json", cwd=cwd, env=env)
    assert "Traceback" not in proc.stderr, proc.stderr
    try:
        data = json.loads(proc.stdout)
    except ValueError:
        raise AssertionError(
            f"not JSON (exit {proc.returncode}): {proc.stdout!r} {proc.stderr!r}"
        ) from None
    return proc.returncode, data, proc.stderr


def write_project(
    root: Path, deps: list[str], *, requires_python: str = ">=3.10", extra: str = ""
) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    lines = ",\n".join(f'    "{d}"' for d in deps)
    (root / "pyproject.toml").write_text(
        f'[project]\nname = "bot"\nversion = "0.1.0"\nrequires-python = "{requires_python}"\n'
        f"dependencies = [\n{lines}\n]\n{extra}",
        encoding="utf-8",
    )
    return root


def findings(report: dict[str, Any], rule_id: str) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["rule_id"] == rule_id]


def strip_volatile(finding: dict[str, Any]) -> dict[str, Any]:
    """A finding without its fingerprint (a hash of the rest)."""
    return {k: v for k, v in finding.items() if k != "fingerprint"}


def not_ok(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The sources a report could not read whole (what an incomplete report is about)."""
    return [s for s in report["sources"] if s["status"] != "ok"]


def lock_complete(*args: str) -> tuple[int, dict[str, Any], str]:
    """``lock`` against the real index, run once more when every source it failed says it
    may be retried (a page the index did not serve in time on a loaded machine): the
    report must then be complete, and its failures are shown when it is not."""
    got = run_json("lock", *args)
    failed = [s for s in not_ok(got[1]) if s["status"] == "failed"]
    if failed and all(s.get("retryable") for s in failed):
        got = run_json("lock", *args)
    assert got[1]["complete"] is True, not_ok(got[1])
    return got
