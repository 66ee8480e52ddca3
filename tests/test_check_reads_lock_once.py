"""`check` reads the project's own lock once: its lock step and the project scan (AG121
judged against what the lock holds) share the one read. Real uv writes the lock from a
local index of small real wheels."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agentguard.check import CheckOptions, run_check
from agentguard.findings import SourceStatus
from agentguard.lock.backend import uv_binary
from agentguard.lock.readers import read_lock
from agentguard.lock.readers.uv_lock import UvLockReader
from tests.wheelhouse import build_wheel, write_simple_index

pytestmark = pytest.mark.usefixtures("isolated_cache")


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    wheels = tmp_path / "wheels"
    build_wheel(wheels, "mcp", "1.5.0")
    url = write_simple_index(wheels, tmp_path / "simple")
    root = tmp_path / "bot"
    root.mkdir()
    (root / "pyproject.toml").write_text(
        '[project]\nname = "bot"\nversion = "0.1.0"\nrequires-python = ">=3.10"\n'
        'dependencies = ["mcp>=1.0"]\n\n[tool.uv]\npackage = false\n\n'
        f'[[tool.uv.index]]\nname = "local"\nurl = "{url}"\ndefault = true\n',
        encoding="utf-8",
    )
    subprocess.run(
        [uv_binary(), "lock", "--python", sys.executable],
        cwd=root,
        capture_output=True,
        check=True,
        timeout=300,
    )
    return root


def test_check_parses_the_uv_lock_once_and_both_steps_use_it(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: list[str] = []
    real = UvLockReader.read

    def counted(self: UvLockReader, text: str, path: str) -> object:
        reads.append(path)
        return real(self, text, path)

    monkeypatch.setattr(UvLockReader, "read", counted)
    report = run_check(CheckOptions(project=project)).report

    assert reads == ["uv.lock"]
    lock_sources = [
        (s.kind, s.status, s.reason) for s in report.sources if s.name.endswith("uv.lock")
    ]
    assert lock_sources == [
        ("lockfile", SourceStatus.OK, "the project's own lock (1 packages, written by uv)"),
        ("file", SourceStatus.OK, "lock (1 packages)"),
    ]
    ag121 = [f for f in report.findings if f.rule_id == "AG121"]
    assert [(f.severity.value, f.evidence.get("locked")) for f in ag121] == [("info", ["1.5.0"])]


def test_a_text_read_under_another_label_is_the_same_lock_with_that_label(
    project: Path,
) -> None:
    text = (project / "uv.lock").read_text(encoding="utf-8")
    first = read_lock(UvLockReader(), text, "uv.lock")
    assert read_lock(UvLockReader(), text, "uv.lock") is first
    other = read_lock(UvLockReader(), text, "./uv.lock")
    assert other.path == "./uv.lock"
    assert other == UvLockReader().read(text, "./uv.lock")
    changed = text.replace('version = "1.5.0"', 'version = "1.5.0"\n# changed', 1)
    assert read_lock(UvLockReader(), changed, "uv.lock") is not first
