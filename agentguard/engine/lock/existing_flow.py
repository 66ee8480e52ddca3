"""`agentguard lock` on a project that already locks with uv, Poetry or a PEP 751 writer:
the project's own tool stays authoritative. ``--check`` reads its lock; a re-lock of a uv
project runs ``uv lock`` and gates the result (:mod:`agentguard.engine.lock.uv_project`); a
Poetry lock is read and gated, not re-locked."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agentguard.findings import Finding, JSONValue, Report, Source
from agentguard.lock.deadline import NO_DEADLINE, Deadline
from agentguard.lock.inputs import ProjectInputs
from agentguard.lock.mutex import PYLOCK, REQUIREMENTS_LOCK
from agentguard.lock.readers import LockReadError, read_existing
from agentguard.lock.readers.interface import ExistingLock, LockReader
from agentguard.lock.uv_declared import workspace_declared as workspace_declared
from agentguard.lock.which_lock import derived_pylock as derived_pylock
from agentguard.lock.which_lock import existing_reader as existing_reader
from agentguard.provenance import make_report

if sys.version_info >= (3, 11):
    pass
else:  # pragma: no cover
    pass

if TYPE_CHECKING:
    from agentguard.config import DepsPolicy
    from agentguard.lock.start import Settings
    from agentguard.lock.uv_lock_run import UvLockRun
from agentguard.engine.lock.existing_graph import graph_findings as graph_findings
from agentguard.lock.existing_parts import _pyproject_data
from agentguard.lock.existing_parts import declared_as_uv_records as declared_as_uv_records
from agentguard.lock.existing_parts import facts_of as facts_of
from agentguard.lock.existing_parts import file_digest as file_digest
from agentguard.lock.existing_parts import lock_source as lock_source
from agentguard.lock.existing_parts import read_failure as read_failure
from agentguard.lock.existing_parts import root_requirements as root_requirements


def inputs_source(inputs: ProjectInputs) -> Source:
    if inputs.dynamic_unknown is not None:
        what = "its [project] dependencies are dynamic (not read: see below)"
    elif inputs.virtual_root:
        what = f"a uv workspace root without a package of its own ({len(inputs.requirements)} requirements)"
    else:
        what = f"{len(inputs.requirements)} requirements"
    return Source.ok("file", inputs.source, what)


def dynamic_source(inputs: ProjectInputs, lock: ExistingLock | None) -> Source | None:
    """The skipped source that says the project's dependencies are dynamic and unknown
    here, and what the gate read instead."""
    if inputs.dynamic_unknown is None:
        return None
    if lock is not None and lock.root_requires is not None:
        instead = (
            f"the gate reads {lock.path}'s own record of the project's requirements "
            f"({len(lock.root_requires)}); whether that record is current was not checked "
            "(`uv lock --check` would run the build backend, which is the pull request's code)"
        )
    else:
        instead = "the project's own requirements are unknown, so they were not checked"
    return Source.skipped(
        "file",
        f"{inputs.source} [project] dependencies",
        f"dynamic: {inputs.dynamic_unknown}; {instead}",
    )


def check_existing(
    inputs: ProjectInputs,
    reader: LockReader,
    policy: DepsPolicy,
    index_url: str | None = None,
    deadline: Deadline = NO_DEADLINE,
) -> Report:
    """Offline when the cache holds the edges: AG101, AG104 and AG103 against the project's lock
    (indexes read: the configured ones, ``index_url`` the run's --index-url; every read
    within ``deadline``, the run's)."""
    from agentguard.engine.lock.existing_check import (
        check_hashes,
        check_in_sync,
        check_members_in_sync,
        check_poetry_hash,
    )

    root = inputs.root
    sources: list[Source] = [inputs_source(inputs)]
    prov: dict[str, JSONValue] = {
        "input_hash": inputs.input_hash,
        "input_source": inputs.source,
        "lock_file": reader.filename,
    }
    try:
        lock = read_existing(root, reader)
    except LockReadError as exc:
        sources.append(
            read_failure(exc, f"Fix {exc.file} (re-generate it with the tool that wrote it).")
        )
        return make_report("lock --check", [], sources, target=str(root), inputs=prov)
    sources.append(lock_source(lock))
    prov["lock_digest"] = file_digest(root / lock.path)
    from agentguard.lock.existing import analyse_existing  # (index client: only when used)

    analysis = analyse_existing(
        lock, root_requirements(inputs, lock), base=root, index_url=index_url, deadline=deadline
    )
    sources.extend(analysis.sources)
    declared = declared_as_uv_records(root) if lock.format == "uv.lock" else None
    members = workspace_declared(root) if lock.format == "uv.lock" else {}
    unknown = dynamic_source(inputs, lock)
    if unknown is not None:
        sources.append(unknown)
    for name, (path, member) in sorted(members.items()):
        if member.records is None:
            sources.append(
                Source.skipped(
                    "file",
                    f"{path} [project] dependencies",
                    f"workspace member {name}: dynamic ({member.why or 'not read'}); "
                    f"its record in {lock.path} was not compared with it",
                )
            )
    findings = [
        *check_poetry_hash(lock, _pyproject_data(root), inputs.source),
        *check_in_sync(lock, inputs, declared),
        *check_members_in_sync(lock, members),
        *check_hashes(lock),
        *graph_findings(analysis, policy),
    ]
    notes = [
        f"Read {lock.path}, the project's own lock (written by {lock.created_by}); wrote nothing."
    ]
    if analysis.unread_edges:
        notes.append(
            f"{len(analysis.unread_edges)} edges could not be read (their parent's Requires-Dist is "
            "unknown): " + ", ".join(analysis.unread_edges[:10])
        )
    return make_report(
        "lock --check",
        findings,
        sources,
        target=str(root),
        inputs=prov,
        facts=facts_of(lock, analysis),
        notes=notes,
    )


def lock_existing(
    opts: Any,
    inputs: ProjectInputs,
    reader: LockReader,
    policy: DepsPolicy,
    started: UvLockRun | None = None,
    *,
    no_build: bool = False,
    settings: Settings | None = None,
    warm: Callable[[], None] = lambda: None,
    deadline: Deadline | None = None,
) -> Report:
    """A re-lock: uv projects through ``uv lock`` and the gate; other locks are read and
    gated, not re-locked (said so). ``started``: `uv lock` already running (lock.early);
    ``settings``: the cooldown's cut-off `uv lock` is given; ``deadline``: the run's
    (made from ``--timeout`` when not given)."""
    if deadline is None:
        deadline = Deadline.start(getattr(opts, "timeout", None))
    if reader.format == "uv.lock":
        from agentguard.engine.lock.uv_project import relock_uv

        report = relock_uv(
            opts,
            inputs,
            policy,
            started,
            no_build=no_build,
            settings=settings,
            warm=warm,
            deadline=deadline,
        )
        return _export(opts, inputs, reader, report)
    report = check_existing(inputs, reader, policy, getattr(opts, "index_url", None), deadline)
    from dataclasses import replace

    gate_findings, gate_sources, gate_notes = _gate_against_committed(
        inputs, reader, opts, deadline
    )
    report = replace(
        report,
        findings=(*report.findings, *gate_findings),
        sources=(*report.sources, *gate_sources),
        notes=(*report.notes, *gate_notes),
    )

    how = {
        "poetry.lock": "run `poetry lock` (with `--regenerate` to upgrade), then `agentguard lock` "
        "again to gate the result",
    }.get(reader.format, f"re-generate {reader.filename} with the tool that wrote it")
    report = _export(opts, inputs, reader, report)
    return replace(
        report,
        provenance=replace(report.provenance, command="lock"),
        notes=(
            *report.notes,
            f"Re-locking through {'Poetry' if reader.format == 'poetry.lock' else 'the tool that wrote it'} was not done: {how}. "
            f"No {REQUIREMENTS_LOCK} or {PYLOCK} was written beside {reader.filename}.",
        ),
    )


def _gate_against_committed(
    inputs: ProjectInputs, reader: LockReader, opts: Any, deadline: Deadline
) -> tuple[list[Finding], list[Source], list[str]]:
    """AG102 for the lock in the working tree against the one at git HEAD (the tool that
    wrote it has already replaced it: the gate says so, it cannot refuse)."""
    from agentguard.lock.committed import committed_text
    from agentguard.rules.deps_gate import check_major_crossings

    root = inputs.root
    before, why = committed_text(root, reader.filename)
    if before is None:
        return [], [Source.skipped("lockfile", f"{reader.filename} at HEAD", why)], []
    try:
        old = reader.read(before, f"{reader.filename} (HEAD)")
        new = read_existing(root, reader)
    except LockReadError as exc:
        return [], [read_failure(exc, "Fix the lock, then re-run.")], []
    from agentguard.lock.existing import analyse_existing

    analysis = analyse_existing(
        new,
        root_requirements(inputs, new),
        base=root,
        index_url=getattr(opts, "index_url", None),
        deadline=deadline,
    )
    crossings = check_major_crossings(
        old.packages(), analysis.graph, opts.allow_major, inputs.requires_python
    )
    source = Source.ok(
        "lockfile", f"{reader.filename} at HEAD", f"{len(old.registry_pins)} packages"
    )
    blocking = sorted({str(f.evidence["package"]) for f in crossings if f.severity.value != "info"})
    notes = []
    if blocking:
        notes.append(
            f"{reader.filename} crosses a major against the committed one ({', '.join(blocking)}): "
            f"review, or restore it with `git checkout -- {reader.filename}`."
        )
    return crossings, [source], notes


def _export(opts: Any, inputs: ProjectInputs, reader: LockReader, report: Report) -> Report:
    """``--export``: write the (gated) lock as requirements.lock or pylock.toml, only when
    the run wrote or kept a lock it could stand behind."""
    from dataclasses import replace

    kind = getattr(opts, "export", None)
    if not kind:
        return report
    blocked = any(
        f.rule_id == "AG102" and f.severity.value != "info" for f in report.findings
    ) or any(s.status.value == "failed" for s in report.sources)
    if blocked:
        note = f"Not exported ({kind}): the gate did not pass or a source failed."
        return replace(report, notes=(*report.notes, note))
    from agentguard.lock.export import render_export
    from agentguard.lock.lockfile import write_atomically

    lock = read_existing(inputs.root, reader)
    name, text = render_export(lock, kind)
    try:
        write_atomically({inputs.root / name: text})
    except OSError as exc:
        failed = Source.failed(
            "lockfile",
            name,
            f"cannot write the export: {exc}",
            error_code="lockfile-write-failed",
            retryable=False,
        )
        return replace(report, sources=(*report.sources, failed))
    note = f"Exported {reader.filename} as {name} (asked with --export {kind}); {reader.filename} stays the lock."
    return replace(report, notes=(*report.notes, note))
