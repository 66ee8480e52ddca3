"""Which local package `uv lock` would build (agentguard/lock/uv_builds.py): the project or a
workspace member with dynamic metadata; what cannot be read is "may be built"."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentguard.lock import uv_builds
from agentguard.lock.uv_builds import built_by_uv_lock

_STATIC = '[project]\nname = "{n}"\nversion = "1"\ndependencies = []\n'
_DYNAMIC = '[project]\nname = "{n}"\ndynamic = ["version"]\n'


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _root(tmp_path: Path, members: str = "", exclude: str = "") -> Path:
    ws = f"\n[tool.uv.workspace]\nmembers = [{members}]\nexclude = [{exclude}]\n"
    _write(tmp_path / "pyproject.toml", _STATIC.format(n="root") + ws)
    return tmp_path


def test_static_project_and_members_build_nothing(tmp_path: Path) -> None:
    root = _root(tmp_path, '"libs/*"')
    _write(root / "libs" / "a" / "pyproject.toml", _STATIC.format(n="a"))
    (root / "libs" / "notes").mkdir()  # (no pyproject.toml: uv refuses it, builds nothing)
    assert built_by_uv_lock(root) is None


def test_a_dynamic_member_is_named(tmp_path: Path) -> None:
    root = _root(tmp_path, '"libs/*"')
    _write(root / "libs" / "a" / "pyproject.toml", _STATIC.format(n="a"))
    _write(root / "libs" / "b" / "pyproject.toml", _DYNAMIC.format(n="b"))
    assert built_by_uv_lock(root) == "libs/b/pyproject.toml (its metadata is dynamic)"


def test_an_excluded_member_is_not_built(tmp_path: Path) -> None:
    root = _root(tmp_path, '"libs/*"', '"libs/b"')
    _write(root / "libs" / "b" / "pyproject.toml", _DYNAMIC.format(n="b"))
    assert built_by_uv_lock(root) is None


@pytest.mark.parametrize(
    ("members", "why"),
    [
        ('"../*"', "leaves the project"),
        ('"/etc"', "leaves the project"),
        ("1", "not a list of patterns"),
    ],
)
def test_members_that_cannot_be_told_may_be_built(tmp_path: Path, members: str, why: str) -> None:
    reason = built_by_uv_lock(_root(tmp_path, members))
    assert reason is not None and why in reason


def test_a_member_that_is_a_link_out_or_not_toml_may_be_built(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    _write(outside / "pyproject.toml", _STATIC.format(n="o"))
    root = _root(tmp_path / "p", '"libs/*"')
    (root / "libs").mkdir()
    (root / "libs" / "o").symlink_to(outside)
    assert "outside the project" in (built_by_uv_lock(root) or "")
    (root / "libs" / "o").unlink()
    _write(root / "libs" / "x" / "pyproject.toml", "[project\n")
    assert built_by_uv_lock(root) == "libs/x/pyproject.toml (it cannot be read as TOML)"


def test_too_many_members_may_be_built(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(uv_builds, "MAX_MEMBERS", 3)
    root = _root(tmp_path, '"libs/*"')
    for n in range(5):
        _write(root / "libs" / f"m{n}" / "pyproject.toml", _STATIC.format(n=f"m{n}"))
    assert "more than 3 workspace members" in (built_by_uv_lock(root) or "")


def test_a_dynamic_or_unreadable_root(tmp_path: Path) -> None:
    _write(tmp_path / "pyproject.toml", _DYNAMIC.format(n="r"))
    assert built_by_uv_lock(tmp_path) == "pyproject.toml (its metadata is dynamic)"
    _write(tmp_path / "pyproject.toml", "not = toml = here")
    assert built_by_uv_lock(tmp_path) == "pyproject.toml (it cannot be read as TOML)"
