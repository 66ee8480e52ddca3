"""The locks a project holds, and which of them `lock --check` (and `check`'s lock step)
reads: every one its own tooling installs from, none picked (the check over them:
:mod:`agentguard.engine.lock.every_lock`); and the uv workspace a member without a lock of
its own is installed from."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from agentguard.lock.mutex import PYLOCK, REQUIREMENTS_LOCK
from agentguard.lock.which_lock import derived_pylock, is_export, quick_kind

if TYPE_CHECKING:
    from agentguard.lock.readers.interface import LockReader


def locks_to_check(root: Path) -> tuple[bool, tuple[LockReader, ...]]:
    """(whether agentguard's own pair is checked, the other tools' locks to check)."""
    from agentguard.lock.readers import find_existing
    from agentguard.lock.readers.uv_lock import UvLockReader

    if quick_kind(root) == "uv.lock":
        return False, (UvLockReader(),)
    found = find_existing(root)
    foreign = tuple(r for r in found if r.filename != PYLOCK)
    requirements = root / REQUIREMENTS_LOCK
    if requirements.exists() and not (is_export(requirements) and _exported(root, foreign)):
        return True, foreign  # agentguard's pair, and every other lock beside it
    if not found:
        return True, ()  # no lock at all (a workspace member: :func:`workspace_root`)
    derived = foreign and any(r.filename == PYLOCK for r in found)
    if derived and derived_pylock(root / PYLOCK) and _exported(root, foreign, PYLOCK):
        found = foreign
    return False, found


def _exported(root: Path, foreign: tuple[LockReader, ...], name: str = REQUIREMENTS_LOCK) -> bool:
    """Whether ``name`` provably holds what one foreign lock holds: the export agentguard
    writes from it, byte for byte (requirements.lock), or pins, versions and hashes all
    held by it (a pylock.toml from `uv export`). A mark in the file alone proves nothing."""
    from agentguard.errors import UsageError
    from agentguard.lock.export import render_export
    from agentguard.lock.readers import LockReadError, read_existing, read_lock_text
    from agentguard.lock.readers.pylock import PylockReader

    try:
        text = read_lock_text(root / name, name)
    except LockReadError:
        return False
    for reader in foreign:
        try:
            lock = read_existing(root, reader)
            if name == REQUIREMENTS_LOCK:
                if render_export(lock, "requirements")[1] == text:
                    return True
                continue
            pins = {(p.name, p.version, p.hashes) for p in lock.registry_pins}
            exported = PylockReader().read(text, name)
        except (LockReadError, UsageError):
            continue
        if all((p.name, p.version, p.hashes) in pins for p in exported.registry_pins):
            return True
    return False


MAX_LEVELS_UP = 8


def workspace_root(project: Path) -> Path | None:
    """The uv workspace root above ``project`` that lists it as a member and holds the
    uv.lock it is installed from (`uv sync` in a member uses the workspace's lock). Looked
    for up to the repository's top (the folder holding ``.git``), at most a few levels."""
    import sys

    from agentguard import safeio
    from agentguard.errors import UsageError
    from agentguard.lock.inputs import is_virtual_workspace
    from agentguard.lock.inputs_tools import uv_workspace_members

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    here = project.resolve()
    if (here / ".git").exists():
        return None
    for level, parent in enumerate(here.parents):
        if level >= MAX_LEVELS_UP:
            return None
        py = parent / "pyproject.toml"
        if py.is_file() and (parent / "uv.lock").is_file():
            try:
                data = tomllib.loads(safeio.read_text(py, root=parent, cap=safeio.MAX_CONFIG_BYTES))
                members = uv_workspace_members(parent, data)
            except (OSError, UnicodeDecodeError, ValueError, RecursionError, UsageError):
                data, members = {}, []
            listed = any(m.parent.resolve() == here for m in members)
            if listed and (is_virtual_workspace(data) or "project" in data):
                return parent
        if (parent / ".git").exists():
            return None  # (the repository's top: nothing above it is the project's)
    return None
