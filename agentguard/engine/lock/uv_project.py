"""Re-locking a uv project: ``uv lock`` runs on a copy of the project
(:mod:`agentguard.lock.uv_lock_run`), and the new ``uv.lock`` replaces the committed one
only after the major gate (AG102) passed. A refused or failed re-lock leaves the committed
file byte for byte as it was."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from agentguard.engine.lock.existing_graph import graph_findings
from agentguard.findings import Finding, JSONValue, Report, Severity, Source
from agentguard.lock.deadline import DEADLINE_CODE, Deadline
from agentguard.lock.existing import ExistingAnalysis, analyse_existing, refresh_released
from agentguard.lock.existing_parts import (
    declared_as_uv_records,
    facts_of,
    file_digest,
    lock_source,
    read_failure,
    root_requirements,
)
from agentguard.lock.inputs import ProjectInputs
from agentguard.lock.readers import read_lock_text
from agentguard.lock.readers.interface import ExistingLock, LockReadError
from agentguard.lock.readers.uv_lock import UvLockReader
from agentguard.lock.uv_lock_run import UV_LOCK, UvLockRun
from agentguard.lock.uv_lock_run import config_flags as config_flags
from agentguard.lock.uv_lock_run import uv_lock_command as uv_lock_command
from agentguard.provenance import make_report

if TYPE_CHECKING:
    from pathlib import Path

    from agentguard.config import DepsPolicy
    from agentguard.lock.start import Settings


def relock_uv(
    opts: Any,
    inputs: ProjectInputs,
    policy: DepsPolicy,
    started: UvLockRun | None = None,
    *,
    no_build: bool = False,
    settings: Settings | None = None,
    warm: Callable[[], None] = lambda: None,
    deadline: Deadline | None = None,
) -> Report:
    """``deadline``: the run's (`uv lock` and every index read of the analysis within it;
    made from ``--timeout`` when not given). ``started``: `uv lock` already running for
    these options (else it is started here, once the committed lock was read); ``no_build``: `build = false` in the configuration;
    ``settings``: the cooldown (its cut-off goes to `uv lock` as ``--exclude-newer``);
    ``warm``: the caller's imports, done while `uv lock` runs."""
    from agentguard.lock.lockfile import write_atomically
    from agentguard.lock.resolver_errors import classify as _classify
    from agentguard.rules.deps_gate import check_major_crossings

    deadline = Deadline.start(opts.timeout) if deadline is None else deadline

    root = inputs.root
    path = root / UV_LOCK
    sources: list[Source] = [
        Source.ok("file", inputs.source, f"{len(inputs.requirements)} requirements")
    ]
    prov: dict[str, JSONValue] = {
        "input_hash": inputs.input_hash,
        "input_source": inputs.source,
        "lock_file": UV_LOCK,
        "lock_digest_before": file_digest(path),
    }
    reader = UvLockReader()
    old: ExistingLock | None = None
    old_text: str | None = None
    if path.exists() or path.is_symlink():
        try:
            old_text = read_lock_text(path, UV_LOCK)  # capped, no link followed
            old = reader.read(old_text, UV_LOCK)
        except LockReadError as exc:
            sources.append(read_failure(exc, "Fix uv.lock (or restore it from git), then re-run."))
        if old is None:
            if started is not None:
                started.cancel()
            return _not_written(
                root, sources, prov, f"{UV_LOCK} was left untouched; `uv lock` was not run."
            )
        sources.append(lock_source(old))
    # While uv resolves, refresh the released versions of what the lock holds now (an
    # upgrade must see new majors; a re-lock keeps most names): the analysis reads the cache.
    upgrading = bool(opts.upgrade or opts.upgrade_packages)
    # Without an upgrade, uv mostly keeps the lock as it is: analyse the committed one
    # meanwhile, and use that analysis when the new file is byte-identical.
    refreshing: Future[None] | None = None
    speculating: Future[ExistingAnalysis] | None = None
    if old is not None:
        pool = ThreadPoolExecutor(1)
        if upgrading:
            refreshing = pool.submit(
                refresh_released, old, root, index_url=opts.index_url, deadline=deadline
            )
        else:
            speculating = pool.submit(
                analyse_existing,
                old,
                root_requirements(inputs, old),
                base=root,
                index_url=opts.index_url,
                deadline=deadline,
            )
        pool.shutdown(wait=False)
    run = started or UvLockRun(
        opts,
        root,
        inputs.requires_python,
        old_text,
        deadline,
        no_build=no_build,
        exclude_newer=settings.exclude_newer if settings is not None else None,
    )
    from agentguard import policy as _policy  # noqa: F401  (imported while `uv lock` runs)
    from agentguard.engine.lock.existing_check import check_hashes as _hashes  # noqa: F401

    warm()
    new_text, stderr, shown = run.result()
    if refreshing is not None:
        refreshing.result()
    prov["command"] = " ".join(shown)
    if new_text is None:
        err = _classify(stderr)
        if run.timed_out:
            err.code, err.retryable = DEADLINE_CODE, True
            err.remedy = "Check the index, or give the run more time with --timeout."
        sources.append(
            Source.failed(
                "resolver",
                "uv lock",
                str(err) if stderr else "uv lock failed",
                error_code=err.code,
                retryable=err.retryable,
                remedy=err.remedy,
            )
        )
        return _not_written(root, sources, prov, f"{UV_LOCK} was left untouched.")
    try:
        # `uv lock` kept the file byte for byte (a re-lock of unchanged inputs): the same facts
        new = old if old is not None and new_text == old_text else reader.read(new_text, UV_LOCK)
    except LockReadError as exc:
        sources.append(
            read_failure(exc, "Report this: `uv lock` wrote a lock agentguard cannot read.")
        )
        return _not_written(root, sources, prov, f"{UV_LOCK} was left untouched.")
    sources.append(Source.ok("resolver", "uv lock", f"{len(new.registry_pins)} packages locked"))
    analysis = None
    if speculating is not None and new_text == old_text:
        try:
            analysis = speculating.result()  # the same file: the same facts
        except Exception:  # redone below, where any error is reported the usual way
            analysis = None
    if analysis is None:
        analysis = analyse_existing(
            new,
            root_requirements(inputs, new),
            base=root,
            fresh=upgrading and old is None,
            index_url=opts.index_url,
            deadline=deadline,
        )
    sources.extend(analysis.sources)
    findings: list[Finding] = graph_findings(analysis, policy)
    crossings: list[Finding] = []
    if old is not None:
        crossings = check_major_crossings(
            old.packages(), analysis.graph, opts.allow_major, inputs.requires_python
        )
        findings += crossings
    from agentguard.engine.lock.existing_check import check_hashes, check_in_sync

    findings += check_hashes(new) + check_in_sync(new, inputs, declared_as_uv_records(root))
    blocking = [f for f in crossings if f.severity > Severity.INFO]
    notes: list[str] = []
    status = "not-written"
    if blocking:
        status = "refused"
        notes.append(
            f"`uv lock` would cross a major ({', '.join(sorted({str(f.evidence['package']) for f in blocking}))}); "
            f"{UV_LOCK} was left untouched."
        )
    elif any(s.status.value == "failed" for s in sources):
        notes.append(f"A source failed, so the gate is incomplete; {UV_LOCK} was left untouched.")
    elif new_text == old_text:
        notes.append(f"{UV_LOCK} is up to date; left untouched.")
        status = "up-to-date"
    else:
        try:
            write_atomically({path: new_text})
        except OSError as exc:
            sources.append(
                Source.failed(
                    "lockfile",
                    UV_LOCK,
                    f"cannot write: {exc}",
                    error_code="lockfile-write-failed",
                    retryable=False,
                )
            )
            notes.append(f"Writing failed; {UV_LOCK} is unchanged.")
        else:
            status = "written"
            notes.append(
                f"Wrote {UV_LOCK} from `uv lock` after the major gate ({len(new.registry_pins)} packages)."
            )
    prov["lock_digest"] = file_digest(path)
    notes.append(
        f"The lock is the project's own {UV_LOCK}; no requirements.lock or pylock.toml was written."
    )
    facts = facts_of(new, analysis)
    cooldown = settings.cooldown_note() if settings is not None else None
    if settings is not None and cooldown:
        facts["min_release_age"] = settings.min_release_age
        facts["exclude_newer"] = settings.exclude_newer
        notes.append(
            f"{cooldown} uv records the cut-off in {UV_LOCK}, so `uv sync --locked` without "
            "it finds the lock out of date (set `exclude-newer` in [tool.uv] to make it the "
            "project's own)."
        )
    return make_report(
        "lock",
        findings,
        sources,
        target=str(root),
        inputs=prov,
        facts=facts,
        notes=notes,
        status=status,
    )


def _not_written(
    root: Path, sources: list[Source], prov: dict[str, JSONValue], note: str
) -> Report:
    """The report of a re-lock that wrote nothing (``uv.lock`` as it was), with ``note``."""
    return make_report(
        "lock", [], sources, target=str(root), inputs=prov, notes=[note], status="not-written"
    )
