"""`lock --check` (and `check`'s lock step) over every lock the project holds.

A project installs from the lock its own tooling names (`uv sync --locked` reads uv.lock,
`poetry install` reads poetry.lock), whatever else sits beside it. So a checkout that holds
agentguard's pair (requirements.lock + pylock.toml) *and* a uv.lock or poetry.lock gets all
of them checked: a pair the pull request added beside a failing uv.lock cannot hide it. Two
foreign locks (uv.lock and poetry.lock) are both checked, never one picked. Only a
pylock.toml that uv wrote from the uv.lock beside it (``created-by = "uv"``) or that
``agentguard lock --export`` wrote is left to the lock it was exported from; if such a file
says so falsely, the lock it names is still checked, so nothing is hidden by it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from agentguard.findings import JSONValue, Report, Source
from agentguard.lock.mutex import PYLOCK, REQUIREMENTS_LOCK
from agentguard.lock.which_lock import derived_pylock, is_export, quick_kind
from agentguard.provenance import make_report

if TYPE_CHECKING:
    from agentguard.config import DepsPolicy
    from agentguard.lock.inputs import ProjectInputs
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


def check_every_lock(
    root: Path,
    inputs: ProjectInputs,
    deps: DepsPolicy,
    readers: tuple[LockReader, ...],
    own: bool,
    index_url: str | None = None,
) -> Report:
    """One report over each lock (a single lock's report as it is)."""
    from agentguard.engine.lock.check import check_lock
    from agentguard.engine.lock.existing_flow import check_existing

    own_files = (root / REQUIREMENTS_LOCK).exists() or (root / PYLOCK).exists()
    if own and not readers and not own_files:
        member = check_member(root, deps, index_url)
        if member is not None:
            return member
    reports = [check_lock(inputs, deps)] if own else []
    reports += [check_existing(inputs, r, deps, index_url) for r in readers]
    if len(reports) == 1:
        return reports[0]
    return _merged(root, reports)


def check_member(root: Path, deps: DepsPolicy, index_url: str | None = None) -> Report | None:
    """A uv workspace member with no lock of its own: the workspace's uv.lock, checked
    whole (uv installs every member from it), never "no lock"."""
    import dataclasses

    from agentguard.engine.lock.existing_flow import check_existing
    from agentguard.lock.inputs import read_inputs
    from agentguard.lock.readers.uv_lock import UvLockReader

    workspace = workspace_root(root)
    if workspace is None:
        return None
    report = check_existing(
        read_inputs(workspace, allow_urls=True), UvLockReader(), deps, index_url
    )
    rel = root.resolve().relative_to(workspace.resolve())
    note = (
        f"{rel} is a member of the uv workspace at {workspace}: it is installed from that "
        "workspace's uv.lock, which was checked (paths below are the workspace's)."
    )
    return dataclasses.replace(report, notes=(note, *report.notes))


def _merged(root: Path, reports: list[Report]) -> Report:
    sources: list[Source] = []
    seen: set[tuple[str, str, str]] = set()
    for report in reports:
        for s in report.sources:
            key = (s.kind, s.name, s.status.value)
            if key not in seen:
                seen.add(key)
                sources.append(s)
    facts: dict[str, JSONValue] = dict(reports[0].facts)
    facts["locks"] = [dict(r.provenance.inputs) for r in reports]
    inputs = dict(reports[0].provenance.inputs)
    inputs["lock_files"] = [str(r.provenance.inputs.get("lock_file") or PYLOCK) for r in reports]
    names = ", ".join(str(n) for n in inputs["lock_files"])
    notes = [
        f"The project holds more than one lock ({names}); each was checked, since it installs "
        "from the one its own tooling names, whatever sits beside it.",
        *(n for r in reports for n in r.notes),
    ]
    return make_report(
        "lock --check",
        [f for r in reports for f in r.findings],
        sources,
        target=str(root),
        inputs=inputs,
        facts=facts,
        notes=notes,
    )


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
