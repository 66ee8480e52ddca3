"""A Poetry project: its inputs come from [tool.poetry], its lock is the poetry.lock Poetry
wrote (tests/fixtures/existing_locks/poetry-relock), gated against the one at git HEAD."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from agentguard.lock.inputs import read_inputs
from tests.lock.helpers import findings, lock_complete

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "existing_locks" / "poetry-relock"

pytestmark = pytest.mark.usefixtures("isolated_cache")


def _git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=root,
        check=True,
        capture_output=True,
    )


def _project(tmp_path: Path) -> Path:
    """The 'before' files committed, the 'after' files (Poetry's re-lock) in the work tree."""
    root = tmp_path / "bot"
    root.mkdir()
    shutil.copy(FIXTURE / "pyproject.before.toml", root / "pyproject.toml")
    shutil.copy(FIXTURE / "poetry.before.lock", root / "poetry.lock")
    _git(root, "init", "-q")
    _git(root, "add", ".")
    _git(root, "commit", "-q", "-m", "before")
    shutil.copy(FIXTURE / "pyproject.toml", root / "pyproject.toml")
    shutil.copy(FIXTURE / "poetry.lock", root / "poetry.lock")
    return root


def test_poetry_dependencies_are_the_inputs(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    (root / "pyproject.toml").write_text(
        '[tool.poetry]\nname = "p"\nversion = "0"\n\n[tool.poetry.dependencies]\n'
        'python = "^3.10"\nanyio = "^4.6"\nidna = {version = "~3.10", markers = "os_name != \'nt\'"}\n'
        'foo = {git = "https://example.invalid/foo.git"}\n\n'
        '[tool.poetry.group.dev.dependencies]\npytest = ">=8,<9"\n',
        encoding="utf-8",
    )
    inputs = read_inputs(root, groups=("dev",))
    assert [(r.text, r.line) for r in inputs.requirements] == [
        ("anyio<5,>=4.6", 7),
        ('idna<3.11,>=3.10; os_name != "nt"', 8),  # Poetry's ~3.10 stays below 3.11
        ("pytest<9,>=8", 12),
    ]
    assert inputs.requires_python == ">=3.10,<4"
    assert inputs.selection == ("group:dev",)


def test_pdm_dev_groups_and_uv_constraints_are_read(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    (root / "pyproject.toml").write_text(
        '[project]\nname = "p"\nversion = "0"\ndependencies = ["claude-agent-sdk==0.2.95"]\n\n'
        '[tool.pdm.dev-dependencies]\nlint = ["ruff>=0.8"]\n\n'
        '[tool.uv]\nconstraint-dependencies = ["mcp<2"]\noverride-dependencies = ["httpx-lite>=1,<2"]\n',
        encoding="utf-8",
    )
    inputs = read_inputs(root, groups=("lint",))
    assert inputs.requirement_lines() == ["claude-agent-sdk==0.2.95", "ruff>=0.8"]
    assert inputs.constraint_lines() == ["mcp<2", "httpx-lite<2,>=1"]


@pytest.mark.network
def test_a_poetry_relock_across_a_major_is_gated_against_the_committed_lock(
    tmp_path: Path,
) -> None:
    root = _project(tmp_path)
    code, report, _ = lock_complete(str(root))

    crossing = findings(report, "AG102")
    assert [(f["severity"], f["evidence"]["old"], f["evidence"]["new"]) for f in crossing] == [
        ("high", "2.10", "3.20")
    ]
    assert code == 1
    assert report["provenance"]["inputs"]["lock_file"] == "poetry.lock"
    assert report["notes"][-2:] == [
        "poetry.lock crosses a major against the committed one (idna): review, or restore it "
        "with `git checkout -- poetry.lock`.",
        "Re-locking through Poetry was not done: run `poetry lock` (with `--regenerate` to "
        "upgrade), then `agentguard lock` again to gate the result. No requirements.lock or "
        "pylock.toml was written beside poetry.lock.",
    ]
    assert sorted(p.name for p in root.iterdir()) == [".git", "poetry.lock", "pyproject.toml"]
