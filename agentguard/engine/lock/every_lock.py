"""`lock --check` (and `check`'s lock step) over every lock the project holds.

A project installs from the lock its own tooling names (`uv sync --locked` reads uv.lock,
`poetry install` reads poetry.lock), whatever else sits beside it. So a checkout that holds
agentguard's pair (requirements.lock + pylock.toml) *and* a uv.lock or poetry.lock gets all
of them checked: a pair the pull request added beside a failing uv.lock cannot hide it. Two
foreign locks (uv.lock and poetry.lock) are both checked, never one picked. Only a
pylock.toml that uv wrote from the uv.lock beside it (``created-by = "uv"``) or that
``agentguard lock --export`` wrote is left to the lock it was exported from; if such a file
says so falsely, the lock it names is still checked, so nothing is hidden by it. Which
locks a project holds is read by :mod:`agentguard.lock.project_locks`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from agentguard.findings import JSONValue, Report, Source
from agentguard.lock.deadline import NO_DEADLINE, Deadline
from agentguard.lock.mutex import PYLOCK, REQUIREMENTS_LOCK
from agentguard.lock.project_locks import workspace_root
from agentguard.provenance import make_report

if TYPE_CHECKING:
    from agentguard.config import DepsPolicy
    from agentguard.lock.inputs import ProjectInputs
    from agentguard.lock.readers.interface import LockReader


def check_every_lock(
    root: Path,
    inputs: ProjectInputs,
    deps: DepsPolicy,
    readers: tuple[LockReader, ...],
    own: bool,
    index_url: str | None = None,
    deadline: Deadline = NO_DEADLINE,
) -> Report:
    """One report over each lock (a single lock's report as it is); every index read
    within ``deadline``, the run's."""
    from agentguard.engine.lock.check import check_lock
    from agentguard.engine.lock.existing_flow import check_existing

    own_files = (root / REQUIREMENTS_LOCK).exists() or (root / PYLOCK).exists()
    if own and not readers and not own_files:
        member = check_member(root, deps, index_url, deadline)
        if member is not None:
            return member
    reports = [check_lock(inputs, deps)] if own else []
    reports += [check_existing(inputs, r, deps, index_url, deadline) for r in readers]
    if len(reports) == 1:
        return reports[0]
    return _merged(root, reports)


def check_member(
    root: Path, deps: DepsPolicy, index_url: str | None = None, deadline: Deadline = NO_DEADLINE
) -> Report | None:
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
        read_inputs(workspace, allow_urls=True), UvLockReader(), deps, index_url, deadline
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
