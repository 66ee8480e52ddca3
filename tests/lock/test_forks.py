"""A universal lock that forks: one package pinned twice under Python-version markers.

Modelled on the field: every real agent stack pins jiter, rpds-py, pillow... twice because
their newest releases dropped Python 3.10, and the major gate (keyed by name alone) refused
every re-lock of unchanged inputs. Real resolver (uv), a local index of real wheels.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.lock.helpers import findings, run_json, strip_volatile, write_project
from tests.wheelhouse import build_wheel, write_simple_index

pytestmark = pytest.mark.usefixtures("isolated_cache")

LOCK_FILES = ("requirements.lock", "pylock.toml")


@pytest.fixture()
def forked_index(tmp_path: Path) -> dict[str, Any]:
    """- ``rpds-lite`` 0.18.0 (any Python) and 0.19.0 (Requires-Python >=3.11): the lock forks
    - ``winhelper`` 1.0.0 and 2.0.0, Windows wheels only, needed only on Windows
    - ``sdk`` 1.0.0 requires ``rpds-lite>=0.10`` and ``winhelper>=1 ; sys_platform == "win32"``
    """
    wheels = tmp_path / "wheels"
    build_wheel(wheels, "rpds-lite", "0.18.0")
    build_wheel(wheels, "rpds-lite", "0.19.0", requires_python=">=3.11")
    for v in ("1.0.0", "2.0.0"):
        build_wheel(wheels, "winhelper", v, tag="py3-none-win_amd64")
    build_wheel(
        wheels, "sdk", "1.0.0", ["rpds-lite>=0.10", 'winhelper>=1 ; sys_platform == "win32"']
    )
    url = write_simple_index(wheels, tmp_path / "simple")
    return {"url": url, "wheels": wheels, "root": tmp_path}


def _lock(project: Path, index: dict[str, Any], *extra: str) -> tuple[int, dict[str, Any], str]:
    return run_json("lock", str(project), "--index-url", index["url"], *extra)


def _files(project: Path) -> dict[str, bytes]:
    return {n: (project / n).read_bytes() for n in LOCK_FILES}


def _republish(index: dict[str, Any]) -> None:
    write_simple_index(index["wheels"], index["root"] / "simple")


def test_relock_and_upgrade_of_unchanged_forked_inputs_are_no_ops(
    tmp_path: Path, forked_index: dict[str, Any]
) -> None:
    project = write_project(tmp_path / "bot", ["sdk==1.0.0"])
    first, report, _ = _lock(project, forked_index)
    text = (project / "requirements.lock").read_text()
    assert 'rpds-lite==0.18.0 ; python_full_version < "3.11"' in text
    assert 'rpds-lite==0.19.0 ; python_full_version >= "3.11"' in text
    assert report["complete"] is True
    before = _files(project)
    for extra in ((), ("--upgrade",)):
        code, again, _ = _lock(project, forked_index, *extra)
        assert code == first, again["findings"]
        assert findings(again, "AG102") == []
        assert _files(project) == before
        assert "The lock is up to date; files left untouched." in again["notes"]


def test_each_fork_is_its_own_finding_with_its_marker(
    tmp_path: Path, forked_index: dict[str, Any]
) -> None:
    project = write_project(tmp_path / "bot", ["sdk==1.0.0"])
    _, report, _ = _lock(project, forked_index)
    rpds = [f for f in findings(report, "AG101") if f["evidence"]["child"] == "rpds-lite"]
    assert [(f["message"], f["fix"]["snippet"], f["evidence"]["locked_marker"]) for f in rpds] == [
        (
            "sdk==1.0.0 declares rpds-lite>=0.10, which admits 2 released majors of rpds-lite "
            "(0.18, 0.19); locked: rpds-lite==0.18.0 ; python_full_version < '3.11'. The range "
            "has no upper bound, so every future major is admitted too.",
            "rpds-lite>=0.18,<0.19 ; python_full_version < '3.11'",
            'python_full_version < "3.11"',
        ),
        (
            "sdk==1.0.0 declares rpds-lite>=0.10, which admits 2 released majors of rpds-lite "
            "(0.18, 0.19); locked: rpds-lite==0.19.0 ; python_full_version >= '3.11'. The range "
            "has no upper bound, so every future major is admitted too.",
            "rpds-lite>=0.19,<0.20 ; python_full_version >= '3.11'",
            'python_full_version >= "3.11"',
        ),
    ]
    [win] = [f for f in findings(report, "AG101") if f["evidence"]["child"] == "winhelper"]
    # A package that exists only under a marker keeps it in its cap.
    assert win["fix"]["snippet"] == "winhelper>=2.0,<3 ; sys_platform == 'win32'"


def test_a_real_major_move_inside_one_fork_names_that_environment(
    tmp_path: Path, forked_index: dict[str, Any]
) -> None:
    project = write_project(tmp_path / "bot", ["sdk==1.0.0"])
    _lock(project, forked_index)
    before = _files(project)
    build_wheel(forked_index["wheels"], "rpds-lite", "1.0.0", requires_python=">=3.11")
    _republish(forked_index)

    code, report, _ = _lock(project, forked_index, "--upgrade")
    assert code == 1
    [crossing] = findings(report, "AG102")
    assert strip_volatile(crossing) == {
        "rule_id": "AG102",
        "title": "Re-lock would cross a major",
        "severity": "high",
        "confidence": "high",
        "message": "rpds-lite would move from 0.19.0 to 1.0.0 (major 0.19 -> 1) for "
        "python_full_version >= '3.11', allowed by: sdk==1.0.0 declares rpds-lite>=0.10.",
        "locations": [
            {
                "dependency_path": [
                    "project",
                    "sdk==1.0.0",
                    "rpds-lite==0.18.0 or 1.0.0",
                ]
            }
        ],
        "evidence": {
            "package": "rpds-lite",
            "old": "0.19.0",
            "new": "1.0.0",
            "old_marker": 'python_full_version >= "3.11"',
            "new_marker": 'python_full_version >= "3.11"',
            "environment": 'python_full_version >= "3.11"',
            "environments": "Python 3.11.0 to 3.14.99 on every platform",
            "allowed_by": ["sdk==1.0.0 declares rpds-lite>=0.10"],
        },
        "fix": {
            "description": "Review rpds-lite 1, then re-run with `--allow-major rpds-lite`; or "
            "add `rpds-lite<0.20 ; python_full_version >= '3.11'` to stay on the locked major.",
            "safe": False,
            "snippet": "rpds-lite<0.20 ; python_full_version >= '3.11'",
        },
        "ambiguous": False,
        "suppressed": None,
    }
    assert _files(project) == before
    # The report of the refused re-lock does not call the new pin locked.
    spans = [
        f["message"] for f in findings(report, "AG101") if f["evidence"]["child"] == "rpds-lite"
    ]
    assert spans and all("not written (the re-lock was refused" in m for m in spans)
    assert all("the lock still holds rpds-lite==0.18.0" in m for m in spans), spans

    code, report, _ = _lock(project, forked_index, "--upgrade", "--allow-major", "rpds-lite")
    [allowed] = findings(report, "AG102")
    assert allowed["severity"] == "info"
    text = (project / "requirements.lock").read_text()
    assert 'rpds-lite==1.0.0 ; python_full_version >= "3.11"' in text
    assert 'rpds-lite==0.18.0 ; python_full_version < "3.11"' in text
    assert report["provenance"]["command"] == "lock --upgrade"


def test_every_fix_snippet_applied_still_installs(
    tmp_path: Path, forked_index: dict[str, Any]
) -> None:
    project = write_project(tmp_path / "bot", ["sdk==1.0.0"])
    _, report, _ = _lock(project, forked_index)
    snippets = sorted({f["fix"]["snippet"] for f in findings(report, "AG101")})
    assert len(snippets) == 3
    write_project(project, ["sdk==1.0.0", *snippets])
    code, report, _ = _lock(project, forked_index)
    assert report["complete"] is True and code == 0, report["findings"]
    assert findings(report, "AG101") and {f["severity"] for f in findings(report, "AG101")} == {
        "info"
    }
    text = (project / "requirements.lock").read_text()
    assert 'winhelper==2.0.0 ; sys_platform == "win32"' in text
    assert _pip_dry_run(project / "requirements.lock").returncode == 0


def test_a_cap_without_the_marker_would_break_the_lock_here(
    tmp_path: Path, forked_index: dict[str, Any]
) -> None:
    # The counter-example the marker rule exists for: a bare cap on a Windows-only package.
    project = write_project(tmp_path / "bot", ["sdk==1.0.0", "winhelper>=2.0,<3"])
    _lock(project, forked_index)
    proc = _pip_dry_run(project / "requirements.lock")
    assert proc.returncode != 0
    assert "winhelper" in proc.stderr


def _pip_dry_run(lock: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--dry-run",
            "--ignore-installed",
            "--isolated",
            "--no-cache-dir",
            "--require-hashes",
            "-r",
            str(lock),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


def test_a_forked_relock_uses_the_analysis_made_while_resolving(
    tmp_path: Path, forked_index: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentguard import lock_command as command
    from agentguard.lock import analysis

    project = write_project(tmp_path / "bot", ["sdk==1.0.0"])
    _lock(project, forked_index)
    real = analysis.analyse
    calls: list[int] = []

    def counting(pins: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(pins, *args, **kwargs)

    monkeypatch.setattr(analysis, "analyse", counting)
    report, _ = command.run_lock(
        command.LockOptions(project=project, index_url=forked_index["url"], upgrade=True)
    )
    # One analysis: the one of the previous (forked) pins, made beside the resolver.
    assert calls == [1]
    assert "The lock is up to date; files left untouched." in report.notes


def test_check_of_a_forked_lock_says_in_one_line_that_it_is_in_sync(
    tmp_path: Path, forked_index: dict[str, Any]
) -> None:
    project = write_project(tmp_path / "bot", ["sdk==1.0.0"])
    _lock(project, forked_index)
    code, report, _ = run_json("lock", "--check", str(project))
    assert code == 0
    assert report["provenance"]["command"] == "lock --check"
    assert report["notes"] == [
        "The lock is in sync with pyproject.toml: both files were made from these inputs and "
        "pin the same 4 entries, every one hashed (1 more than one per package: forks)."
    ]
    # The digest in the report is the one both files carry.
    text = (project / "requirements.lock").read_text()
    assert f"# lock-digest: {report['provenance']['inputs']['lock_digest']}\n" in text

    # The second fork's entry loses its hash: the finding points at that entry's line.
    lines = text.splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.startswith("rpds-lite==0.19.0"))
    lines[at] = lines[at].removesuffix(" \\")
    del lines[at + 1]
    (project / "requirements.lock").write_text("\n".join(lines) + "\n")
    code, report, _ = run_json("lock", "--check", str(project))
    assert code == 1 and report["notes"] == []
    [unhashed] = findings(report, "AG104")
    assert unhashed["locations"] == [{"path": "requirements.lock", "line": at + 1}]
    assert unhashed["evidence"] == {
        "package": "rpds-lite",
        "version": "0.19.0",
        "marker": 'python_full_version >= "3.11"',
        "hashes": 0,
    }
    assert unhashed["message"].startswith(
        'rpds-lite==0.19.0 ; python_full_version >= "3.11" has no hash'
    )


def test_harden_caps_each_fork_of_a_watched_package_with_its_marker(tmp_path: Path) -> None:
    from agentguard.harden.deps_changes import CONSTRAINTS_FILE
    from tests.harden.support import harden_folder

    wheels = tmp_path / "wheels"
    build_wheel(wheels, "mcp", "1.5.0")
    build_wheel(wheels, "mcp", "2.1.0", requires_python=">=3.11")
    build_wheel(wheels, "agent-sdk", "1.0.0", ["mcp>=1.0"])
    url = write_simple_index(wheels, tmp_path / "simple")
    project = write_project(tmp_path / "bot", ["agent-sdk==1.0.0"])
    run_json("lock", str(project), "--index-url", url)
    harden_folder(project, tmp_path / "out")
    caps = [
        ln
        for ln in (tmp_path / "out" / CONSTRAINTS_FILE).read_text().splitlines()
        if ln.startswith("mcp")
    ]
    assert caps == [
        "mcp>=1.0,<2 ; python_full_version < '3.11'",
        "mcp>=2.0,<3 ; python_full_version >= '3.11'",
    ]
