"""Which local package `uv lock` would build (agentguard/lock/uv_builds.py): the project or a
workspace member with dynamic metadata; what cannot be read is "may be built"."""

from __future__ import annotations

import os
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


@pytest.mark.parametrize(
    ("members", "exclude", "where"),
    [
        # uv's glob: `*` matches a name with a leading dot (Python's skips it)
        ('"libs/*"', "", "libs/.m"),
        # `**` is any depth to uv (Python's glob read it as `*`)
        ('"**/m"', "", "libs/x/m"),
        ('"libs/**"', "", "libs/m"),
        # uv excludes by the path its glob found: a link to an excluded folder is built
        ('"libs/*"', '"other/b"', "libs/a"),
        # an exclude pattern it was not seen to read as written is not taken to exclude
        ('"libs/*"', '"libs/./m"', "libs/m"),
        ('"libs/*"', '"libs//m"', "libs/m"),
    ],
)
def test_members_are_found_as_uv_finds_them(
    tmp_path: Path, members: str, exclude: str, where: str
) -> None:
    root = _root(tmp_path, members, exclude)
    if where == "libs/a":
        _write(root / "other" / "b" / "pyproject.toml", _DYNAMIC.format(n="b"))
        (root / "libs").mkdir()
        (root / "libs" / "a").symlink_to("../other/b")
    else:
        _write(root / where / "pyproject.toml", _DYNAMIC.format(n="m"))
    assert built_by_uv_lock(root) == f"{where}/pyproject.toml (its metadata is dynamic)"


def test_exclude_as_uv_reads_it(tmp_path: Path) -> None:
    """`*` in an exclude pattern crosses folders for uv (`libs/*` excludes `libs/x/m`), and
    `./libs/m` or `libs/m/` is `libs/m` to it."""
    root = _root(tmp_path, '"libs/*/*", "libs/[mn]"', '"libs/*"')
    assert built_by_uv_lock(root) is None
    root = _root(tmp_path, '"libs/*/*", "libs/[mn]"', '"./libs/m", "libs/x/m/"')
    _write(root / "libs" / "x" / "m" / "pyproject.toml", _DYNAMIC.format(n="m"))
    _write(root / "libs" / "m" / "pyproject.toml", _DYNAMIC.format(n="m"))
    assert built_by_uv_lock(root) is None


@pytest.mark.parametrize(
    ("dynamic", "built"),
    [
        ('["readme", "classifiers", "scripts", "entry-points"]', False),  # (never asked by uv)
        ("[]", False),
        ('["version"]', True),
        ('["requires-python"]', True),
        ('["optional-dependencies"]', True),
        ('["readme", "dependencies"]', True),
        ('["some-future-field"]', True),
        ('"dependencies"', True),
        ("[1]", True),
    ],
)
def test_which_dynamic_fields_uv_builds_for(tmp_path: Path, dynamic: str, built: bool) -> None:
    _write(
        tmp_path / "pyproject.toml", f'[project]\nname = "r"\nversion = "1"\ndynamic = {dynamic}\n'
    )
    assert (built_by_uv_lock(tmp_path) is not None) is built


def test_link_loops_and_long_lists_are_bounded(tmp_path: Path) -> None:
    import time

    root = _root(tmp_path, '"**/zz"')
    for name in ("a", "b"):
        (root / "d").mkdir(exist_ok=True)
        (root / "d" / name).symlink_to("..")
    start = time.monotonic()
    assert "entries" in (built_by_uv_lock(root) or "")
    _root(tmp_path, ", ".join(['"**"'] * 900), ", ".join(['"x*"'] * 90))
    assert "entries" in (built_by_uv_lock(root) or "")
    _root(tmp_path, ", ".join(['"x"'] * 2000))
    assert "workspace patterns" in (built_by_uv_lock(root) or "")
    assert time.monotonic() - start < 10


def test_fifos_do_not_hang(tmp_path: Path) -> None:
    root = _root(tmp_path / "p", '"libs/*"')
    (root / "libs" / "m").mkdir(parents=True)
    os.mkfifo(root / "libs" / "m" / "pyproject.toml")
    assert built_by_uv_lock(root) is None  # (uv cannot read it as a member: nothing built)
    os.mkfifo(tmp_path / "q")
    assert built_by_uv_lock(tmp_path / "q") is not None
    (root / "pyproject.toml").unlink()
    os.mkfifo(root / "pyproject.toml")
    assert built_by_uv_lock(root) == "pyproject.toml (it cannot be read as TOML)"
