"""Every lock a project installs from is checked (issue: a decoy pair hides the real lock).

The project installs from uv.lock (its Dockerfile runs `uv sync --locked`); its uv.lock
fails the gate (plain-http URLs and no hashes, and a stale record). A requirements.lock +
pylock.toml that `agentguard lock` made, placed beside it, must not make the gate pass."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentguard.lock.backend import uv_binary
from tests.lock.helpers import findings, run_json, write_project

pytestmark = pytest.mark.usefixtures("isolated_cache")


def _uv_lock(project: Path, url: str) -> None:
    py = project / "pyproject.toml"
    py.write_text(
        py.read_text()
        + f'\n[tool.uv]\npackage = false\n\n[[tool.uv.index]]\nname = "local"\nurl = "{url}"\n'
        "default = true\n"
    )
    subprocess.run(
        [uv_binary(), "lock", "--offline", "--python", sys.executable],
        cwd=project,
        check=True,
        capture_output=True,
        timeout=300,
    )


def _spoil(uv_lock: Path, names: tuple[str, ...]) -> None:
    """Two packages moved to plain http with no hash (what a hand-edited lock holds)."""
    text = uv_lock.read_text()
    for name in names:
        start = text.index(f'[[package]]\nname = "{name}"')
        end = text.find("[[package]]", start + 1)
        end = len(text) if end < 0 else end
        block = re.sub(r', hash = "sha256:[0-9a-f]+"', "", text[start:end])
        block = re.sub(
            r'(url|path) = "[^"]*/([^/"]+\.whl)"', r'url = "http://127.0.0.1:9/\2"', block
        )
        text = text[:start] + block + text[end:]
    uv_lock.write_text(text)


@pytest.fixture()
def decoy(tmp_path: Path, agent_index: dict[str, Any]) -> Path:
    project = write_project(tmp_path / "bot", ["claude-agent-sdk==0.2.100"])
    code, _report, _ = run_json("lock", str(project), "--index-url", agent_index["url"])
    assert code == 0 and (project / "requirements.lock").is_file()
    pair = {n: (project / n).read_bytes() for n in ("requirements.lock", "pylock.toml")}
    for n in pair:
        (project / n).unlink()
    _uv_lock(project, agent_index["url"])
    _spoil(project / "uv.lock", ("httpx-lite", "mcp"))
    (project / "Dockerfile").write_text(
        "FROM python:3.12-slim\nCOPY . /app\nWORKDIR /app\nRUN pip install uv && uv sync --locked\n"
    )
    for n, data in pair.items():
        (project / n).write_bytes(data)  # the decoy pair, beside the real lock
    return project


def test_a_decoy_pair_does_not_hide_the_uv_lock(decoy: Path) -> None:
    code, report, _ = run_json("check", str(decoy))

    assert sorted((f["severity"], f["evidence"]["package"]) for f in findings(report, "AG104")) == [
        ("high", "httpx-lite"),
        ("high", "mcp"),
    ]
    assert {f["locations"][0]["path"] for f in findings(report, "AG104")} == {"uv.lock"}
    lock_sources = [
        (s["kind"], s["name"], s["status"]) for s in report["sources"] if s["kind"] == "lockfile"
    ]
    assert ("lockfile", "uv.lock", "ok") in lock_sources
    assert ("lockfile", "requirements.lock", "ok") in lock_sources
    assert code == 1


def test_lock_check_reads_both_too_and_names_them(decoy: Path) -> None:
    code, report, _ = run_json("lock", "--check", str(decoy))

    assert code == 1
    assert report["provenance"]["inputs"]["lock_files"] == ["pylock.toml", "uv.lock"]
    assert report["notes"][0] == (
        "The project holds more than one lock (pylock.toml, uv.lock); each was checked, since "
        "it installs from the one its own tooling names, whatever sits beside it."
    )
    assert {f["locations"][0]["path"] for f in findings(report, "AG104")} == {"uv.lock"}


def test_a_forged_export_mark_proves_nothing(decoy: Path) -> None:
    """requirements.lock that claims to be `lock --export`'s output but is not the export
    of uv.lock is checked as a lock of its own (and uv.lock still is)."""
    req = decoy / "requirements.lock"
    req.write_text(
        "# Exported by `agentguard lock --export` from uv.lock; do not edit.\n" + req.read_text()
    )
    _code, report, _ = run_json("lock", "--check", str(decoy))
    assert report["provenance"]["inputs"]["lock_files"] == ["pylock.toml", "uv.lock"]


def test_an_export_of_the_uv_lock_is_not_checked_twice(decoy: Path) -> None:
    for n in ("requirements.lock", "pylock.toml"):
        (decoy / n).unlink()
    shutil.copy(decoy / "uv.lock", decoy / "uv.lock.bak")
    text = (decoy / "uv.lock.bak").read_text()
    # an honest lock (the spoiled entries restored from a fresh `uv lock`)
    (decoy / "uv.lock").unlink()
    subprocess.run(
        [uv_binary(), "lock", "--offline", "--python", sys.executable],
        cwd=decoy,
        check=True,
        capture_output=True,
        timeout=300,
    )
    assert (decoy / "uv.lock").read_text() != text
    _c, report, _ = run_json("lock", str(decoy), "--export", "requirements")
    assert (decoy / "requirements.lock").is_file(), json.dumps(report["notes"])
    _code, report, _ = run_json("lock", "--check", str(decoy))
    assert report["provenance"]["inputs"]["lock_file"] == "uv.lock"
    assert "lock_files" not in report["provenance"]["inputs"]
