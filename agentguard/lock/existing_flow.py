"""`agentguard lock` on a project that already locks with uv, Poetry or a PEP 751 writer:
the project's own tool stays authoritative. ``--check`` reads its lock; a re-lock of a uv
project runs ``uv lock`` and gates the result (:mod:`agentguard.lock.uv_project`); a
Poetry lock is read and gated, not re-locked."""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentguard import safeio
from agentguard.engine import make_report
from agentguard.findings import Finding, JSONValue, Report, Source
from agentguard.lock.inputs import ProjectInputs
from agentguard.lock.mutex import PYLOCK, REQUIREMENTS_LOCK
from agentguard.lock.readers import LockReadError, read_existing
from agentguard.lock.readers.interface import ExistingLock, LockReader
from agentguard.lock.uv_declared import UvDeclared, declared_package
from agentguard.lock.uv_declared import workspace_declared as workspace_declared
from agentguard.lock.which_lock import derived_pylock as derived_pylock
from agentguard.lock.which_lock import existing_reader as existing_reader
from agentguard.safeio import MAX_LOCK_BYTES

if sys.version_info >= (3, 11):
    pass
else:  # pragma: no cover
    pass

if TYPE_CHECKING:
    from agentguard.config import DepsPolicy
    from agentguard.lock.existing import ExistingAnalysis
    from agentguard.lock.start import Settings
    from agentguard.lock.uv_lock_run import UvLockRun


def file_digest(path: Path) -> str | None:
    try:
        return "sha256:" + hashlib.sha256(safeio.read_bytes(path, cap=MAX_LOCK_BYTES)).hexdigest()
    except OSError:
        return None


def lock_source(lock: ExistingLock) -> Source:
    return Source.ok(
        "lockfile",
        lock.path,
        f"the project's own lock ({len(lock.registry_pins)} packages, written by {lock.created_by})",
    )


def read_failure(exc: LockReadError, remedy: str) -> Source:
    return Source.failed(
        "lockfile", exc.file, str(exc), error_code=exc.code, retryable=False, remedy=remedy
    )


def _pyproject_data(root: Path) -> dict[str, Any]:
    """pyproject.toml as data ({} when there is none: requirements.in)."""
    import sys

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    try:
        text = safeio.read_text(root / "pyproject.toml", root=root, cap=safeio.MAX_CONFIG_BYTES)
        data = tomllib.loads(text)
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def declared_as_uv_records(root: Path) -> UvDeclared | None:
    """The root package's requirements as uv records them in its requires-dist (None: the
    folder declares no package: a virtual workspace root)."""
    return declared_package(root, root)


def root_requirements(inputs: ProjectInputs, lock: ExistingLock) -> list[str]:
    """The project's own requirements: declared ones, the development groups the lock
    records (uv installs them by default), and caps from uv's constraint- and
    override-dependencies (a cap there holds the child to one major, like a cap of its own).

    Dependencies a build backend computes (unknown here) are read from the lock's own
    record of the root package; a virtual workspace root requires its members."""
    declared = inputs.requirement_lines()
    if inputs.dynamic_unknown is not None and lock.root_requires is not None:
        declared = [r for r in lock.root_requires if "extra" not in r.partition(";")[2]]
    if inputs.virtual_root:
        declared = [*declared, *(name for name, _reqs in lock.member_requires)]
    return [*declared, *lock.root_requires_dev, *inputs.constraint_lines()]


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


def graph_findings(analysis: ExistingAnalysis, policy: DepsPolicy) -> list[Finding]:
    """AG101, AG105 and AG107 (a pin from an index nobody configured: AG107 says its ranges
    are unread, so it is not AG105's "sdist only" too)."""
    from agentguard.rules.deps import check_major_spans, check_unknown_metadata
    from agentguard.rules.deps_index import check_unconfigured_indexes

    foreign = {name for name, _v, _i, _l in analysis.unconfigured}
    unknown = [
        f
        for f in check_unknown_metadata(analysis.graph)
        if f.evidence.get("package") not in foreign
    ]
    return [
        *check_major_spans(analysis.graph, policy),
        *unknown,
        *check_unconfigured_indexes(analysis.lock_path, analysis.unconfigured),
    ]


def facts_of(lock: ExistingLock, analysis: ExistingAnalysis) -> dict[str, JSONValue]:
    return {
        "lock_file": lock.path,
        "lock_format": lock.format,
        "packages": len(analysis.graph.packages),
        "edges": len(analysis.graph.edges),
        "unread_edges": list(analysis.unread_edges),
    }


def check_existing(
    inputs: ProjectInputs, reader: LockReader, policy: DepsPolicy, index_url: str | None = None
) -> Report:
    """Offline when the cache holds the edges: AG101, AG104 and AG103 against the project's lock
    (indexes read: the configured ones, ``index_url`` the run's --index-url)."""
    from agentguard.lock.existing_check import (
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
        lock, root_requirements(inputs, lock), base=root, index_url=index_url
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
) -> Report:
    """A re-lock: uv projects through ``uv lock`` and the gate; other locks are read and
    gated, not re-locked (said so). ``started``: `uv lock` already running (lock.early);
    ``settings``: the cooldown's cut-off `uv lock` is given."""
    if reader.format == "uv.lock":
        from agentguard.lock.uv_project import relock_uv

        report = relock_uv(
            opts, inputs, policy, started, no_build=no_build, settings=settings, warm=warm
        )
        return _export(opts, inputs, reader, report)
    report = check_existing(inputs, reader, policy, getattr(opts, "index_url", None))
    from dataclasses import replace

    gate_findings, gate_sources, gate_notes = _gate_against_committed(inputs, reader, opts)
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
    inputs: ProjectInputs, reader: LockReader, opts: Any
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
        new, root_requirements(inputs, new), base=root, index_url=getattr(opts, "index_url", None)
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
