"""`agentguard lock` and `agentguard lock --check`: gather, run the AG1xx rules, write."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agentguard import safeio
from agentguard.engine import UsageError, make_report, now_utc
from agentguard.findings import (
    Finding,
    JSONValue,
    Report,
    Severity,
    Source,
    sort_findings,
)
from agentguard.lock.backend import BACKENDS, Resolution, ResolverError
from agentguard.lock.deadline import DEADLINE_CODE
from agentguard.lock.graph import (
    DependencyEdge,
    LockedPackage,
    LockGraph,
)
from agentguard.lock.inputs import ProjectInputs, read_inputs
from agentguard.lock.mutex import PYLOCK, REQUIREMENTS_LOCK, LockfileError, project_lock
from agentguard.lock.pins import pins_by_name
from agentguard.lock.start import LockOptions as LockOptions
from agentguard.lock.start import resolve_request, retain, settings_for
from agentguard.lock.urls import clean_url
from agentguard.safeio import MAX_LOCK_BYTES

if TYPE_CHECKING:
    from agentguard.config import Config, DepsPolicy
    from agentguard.lock.analysis import Analysis
    from agentguard.lock.early import Early
    from agentguard.lock.index import IndexClient
    from agentguard.lock.lockfile import QuickPrevious, StoredLock

# The resolver is started as soon as the project is locked; the modules for everything
# after it (index client, lock file writer, rules, configuration) are imported while it runs.

Progress = Callable[[str], None]


def _file_digest(path: Path) -> str | None:
    try:
        return "sha256:" + hashlib.sha256(safeio.read_bytes(path, cap=MAX_LOCK_BYTES)).hexdigest()
    except OSError:
        return None


def run_lock(
    opts: LockOptions,
    progress: Progress = lambda _m: None,
    warm: Callable[[], None] = lambda: None,
) -> tuple[Report, Severity | None]:
    """The report (with the project's configuration applied) and the configured fail-on.
    ``warm`` runs while the resolver does (to import what the caller needs after it)."""
    if opts.backend not in BACKENDS:
        raise UsageError(f"unknown backend {opts.backend!r} (expected: {', '.join(BACKENDS)})")
    root = opts.project
    from agentguard.lock.early import take

    early = None if opts.check else take(opts)  # the resolver started by __main__, if any
    configured: list[Config] = []  # loaded while the resolver runs (see _lock_locked)
    from agentguard.lock.which_lock import existing_reader

    existing = None
    if early is not None and early.uv_lock is not None:
        existing = existing_reader(root)  # the uv.lock reader, as lock.early saw
        if existing is None or existing.format != "uv.lock":  # (changed meanwhile)
            early.cancel()
            early = None
    if early is not None:
        inputs = early.inputs
        configured.append(early.config)
    else:
        existing = existing_reader(root)  # uv.lock, poetry.lock or another tool's pylock.toml
        inputs = read_inputs(
            root,
            extras=opts.extras,
            all_extras=opts.all_extras,
            groups=opts.groups,
            allow_urls=existing is not None,
        )
    config_file = opts.config_file

    def project_config() -> Config:
        return _config(root, configured, config_file)

    if opts.export and (opts.check or existing is None):
        raise UsageError(
            "--export writes a project's own lock (uv.lock, poetry.lock) as another format; "
            "it needs such a lock and no --check"
        )
    if opts.check:
        if existing is not None:
            from agentguard.lock.existing_flow import check_existing

            report = check_existing(inputs, existing, project_config().deps, opts.index_url)
        else:
            report = check_lock(inputs, project_config().deps)
    else:
        try:
            with early.held if early is not None else project_lock(root):
                if existing is not None:
                    from agentguard.lock.existing_flow import lock_existing

                    report = lock_existing(
                        opts,
                        inputs,
                        existing,
                        project_config().deps,
                        early.uv_lock if early is not None else None,
                        no_build=project_config().build is False,
                        settings=(
                            early.settings
                            if early is not None and early.settings
                            else settings_for(opts, project_config())
                        ),
                        warm=warm,
                    )
                else:
                    report = _lock_locked(opts, inputs, project_config, progress, early, warm)
        except LockfileError as exc:
            report = _failed_report(
                inputs,
                Source.failed(
                    "lockfile",
                    str(root),
                    str(exc),
                    error_code=exc.code,
                    retryable=exc.code == "lock-busy",
                ),
            )
    from agentguard.policy import apply_policy

    config = _config(root, configured, config_file)
    applied = apply_policy(report.findings, config, root=root)
    report = dataclasses.replace(
        report,
        findings=sort_findings(applied.findings),
        sources=(*report.sources, *applied.sources),
        notes=(*report.notes, *config.notes, *applied.notes),
    )
    return report, config.fail_on


def _config(root: Path, loaded: list[Config], config_file: Path | None = None) -> Config:
    """The project's configuration (or only ``config_file``), read once."""
    if not loaded:
        from agentguard.config import load_config

        loaded.append(load_config(root, config_file=config_file))
    return loaded[0]


def _failed_report(
    inputs: ProjectInputs,
    *sources: Source,
    notes: tuple[str, ...] = (),
    command: str = "lock",
) -> Report:
    return make_report(
        command,
        [],
        sources,
        target=str(inputs.root),
        inputs={"input_hash": inputs.input_hash, "input_source": inputs.source},
        notes=(*notes, "No lock file was written or changed."),
    )


def _lock_locked(
    opts: LockOptions,
    inputs: ProjectInputs,
    config: Callable[[], Config],
    progress: Progress,
    early: Early | None = None,
    warm: Callable[[], None] = lambda: None,
) -> Report:
    root = inputs.root
    sources: list[Source] = [
        Source.ok("file", inputs.source, f"{len(inputs.requirements)} requirements")
    ]
    if early is not None and early.settings and early.request:  # started by lock.early
        settings, request = early.settings, early.request
    else:
        settings = settings_for(opts, config())
        request = resolve_request(opts, inputs, settings)
    deadline = request.deadline
    progress(f"resolving {len(inputs.requirements)} requirements with {opts.backend}")
    # The resolver runs in a subprocess; meanwhile read the previous lock and start reading
    # the index pages of the packages it names (a re-lock mostly keeps them).
    pool = ThreadPoolExecutor(1)
    if early is not None and early.run is not None:
        resolving = pool.submit(early.run.result)
    else:
        resolving = pool.submit(BACKENDS[opts.backend], request)
    pool.shutdown(wait=False)
    from agentguard import policy as _policy  # noqa: F401
    from agentguard.lock import sites as _sites  # noqa: F401
    from agentguard.lock.analysis import analyse
    from agentguard.lock.index import IndexClient, background_thread
    from agentguard.lock.lockfile import (
        QuickPrevious,
        build_pylock,
        read_quick,
        read_stored,
        render_pylock,
        render_requirements,
        write_atomically,
    )
    from agentguard.rules import deps as _deps  # noqa: F401  (imported while the resolver runs)

    warm()  # the caller's own (the report's renderer)

    try:
        policy = config().deps
    except UsageError:
        _wait_quietly(resolving)
        raise
    client: IndexClient | None = None
    previous: QuickPrevious | StoredLock | None = read_quick(root)
    if previous is None:
        try:
            previous = read_stored(root)
        except LockfileError as exc:
            _wait_quietly(resolving)
            return _failed_report(
                inputs,
                *sources,
                Source.failed(
                    "lockfile",
                    PYLOCK,
                    str(exc),
                    error_code=exc.code,
                    retryable=False,
                    remedy="Fix or delete the broken lock files, then re-run.",
                ),
                command=command_line(opts),
            )
    if previous is not None:
        names = sorted({p.name for p in _previous_pins(previous)})
        sources.append(
            Source.ok("lockfile", REQUIREMENTS_LOCK, f"previous lock: {len(names)} packages")
        )
        # Read ahead from the index the user configured, never from the one the previous
        # lock names (a pull request's file): that one is reported, not contacted.
        from agentguard.lock.configured import configured

        guess: tuple[str, ...] = ()
        if not opts.no_index:
            allowed = configured(opts.index_url, opts.backend)
            sources.extend(allowed.skipped(_previous_index(previous), REQUIREMENTS_LOCK))
            guess = allowed.urls
        logins = (opts.index_url,) if opts.index_url else ()
        if guess:
            client = IndexClient(guess, opts.find_links, logins=logins, deadline=deadline)
            client.prefetch(names)
    # A re-lock mostly keeps every pin: analyse the previous pins while the resolver runs
    # (on a thread of its own), and use that analysis when the resolver returns exactly
    # those pins (same versions, markers and hashes) from the same index. Otherwise it is
    # not waited for (a dead index it guessed must not hold the run) and the pins are
    # analysed as on a first lock.
    speculating: Future[_Speculated] | None = None
    speculating_with = client
    guessed_pins: tuple[LockedPackage, ...] = ()
    if client is not None and isinstance(previous, QuickPrevious):
        guessed_pins = tuple(previous.pins)
        side = ThreadPoolExecutor(1, initializer=background_thread)
        speculating = side.submit(_speculate, previous, inputs, client, policy, opts.allow_major)
        side.shutdown(wait=False)
    try:
        resolution = resolving.result()
    except ResolverError as exc:
        if client is not None:
            client.close()
        sources.append(
            Source.failed(
                "resolver",
                opts.backend,
                str(exc),
                error_code=exc.code,
                retryable=exc.retryable,
                remedy=exc.remedy,
            )
        )
        return _failed_report(inputs, *sources, command=command_line(opts))
    sources.append(
        Source.ok("resolver", resolution.backend, f"{len(resolution.pins)} packages pinned")
    )

    # The resolver names its index without a login or token; read it as it was given.
    index_urls = tuple(
        opts.index_url if opts.index_url and clean_url(opts.index_url) == u else u
        for u in (() if opts.no_index else resolution.index_urls)
    )
    links = resolution.find_links or opts.find_links
    if client is None or (tuple(clean_url(u) for u in index_urls), tuple(links)) != (
        tuple(clean_url(u) for u in client.index_urls_given),
        tuple(client.find_links),
    ):
        if client is not None:
            client.close()
        client = IndexClient(
            index_urls,
            links,
            logins=(opts.index_url,) if opts.index_url else (),
            deadline=deadline,
        )
    speculated = (
        _outcome(speculating)
        if speculating is not None
        and _same_pins(guessed_pins, resolution.pins)
        and client is speculating_with
        else None
    )
    if speculated is not None:
        client.close()
        analysis, graph = speculated.analysis, speculated.graph
        findings, crossings = list(speculated.findings), list(speculated.crossings)
    else:
        try:
            analysis = analyse(
                resolution.pins, inputs.requirement_lines(), client, progress, policy.watched
            )
        finally:
            client.close()
        graph, findings, crossings = _rules(
            analysis, previous, policy, opts.allow_major, inputs.requires_python
        )
    sources.extend(analysis.sources)
    blocking = [f for f in crossings if f.severity > Severity.INFO]
    young, unknown_times = _young_releases(graph, analysis, settings.min_release_age)
    findings += young

    provenance: dict[str, JSONValue] = {
        "input_hash": inputs.input_hash,
        "input_source": inputs.source,
        "backend": resolution.backend,
        "index_urls": list(resolution.index_urls),
    }
    notes: list[str] = []
    by_name = pins_by_name(graph.packages)
    names = sorted(by_name)
    facts: dict[str, JSONValue] = {
        "packages": len(names),
        "pins": len(graph.packages),  # lock entries: a forked package has one per fork
        "forked_packages": sorted(n for n, ps in by_name.items() if len(ps) > 1),
        "edges": len(graph.edges),
        "releases_younger_than_7_days": len(young),
        "upload_times_unknown": unknown_times,  # their age is unknown, not counted as old
        "only_binary": settings.only_binary,
        "min_release_age": settings.min_release_age,
    }
    cooldown = settings.cooldown_note()
    if cooldown:
        notes.append(cooldown)
    incomplete = any(s.status.value == "failed" for s in sources)
    if blocking:
        notes.append(
            f"A re-lock would cross a major ({', '.join(str(f.evidence['package']) for f in blocking)}); "
            "both lock files were left untouched."
        )
    elif incomplete:
        late = [s.name for s in sources if s.error_code == DEADLINE_CODE]
        if late:
            notes.append(
                f"{deadline.describe().capitalize()}; out of time: {', '.join(late[:10])}"
                + (f" and {len(late) - 10} more" if len(late) > 10 else "")
                + "."
            )
        notes.append(
            "A source failed, so the analysis is incomplete; no lock file was written or changed."
        )
    else:
        resolved_at = now_utc()
        data = build_pylock(
            inputs, resolution, graph, analysis.files, resolved_at, settings.tool_table()
        )
        index_line = clean_url(opts.index_url) if opts.index_url and not opts.no_index else None
        requirements_text = render_requirements(
            resolution.pins,
            inputs,
            index_line,
            opts.find_links,
            lock_digest=data["tool"]["agentguard"]["lock-digest"],
            index_urls=tuple(resolution.index_urls),
        )
        if previous is not None and _same_lock(previous, requirements_text, root):
            notes.append("The lock is up to date; files left untouched.")
        else:
            texts = {
                root / REQUIREMENTS_LOCK: requirements_text,
                root / PYLOCK: render_pylock(data),
            }
            try:
                write_atomically(texts)
            except OSError as exc:
                sources.append(
                    Source.failed(
                        "lockfile",
                        str(root),
                        f"cannot write the lock files: {exc}",
                        error_code="lockfile-write-failed",
                        retryable=False,
                        remedy="Free disk space or fix the folder's permissions.",
                    )
                )
                notes.append("Writing failed; the previous lock files are unchanged.")
            else:
                notes.append(
                    f"Wrote {REQUIREMENTS_LOCK} and {PYLOCK} ({len(names)} packages, "
                    f"{len(graph.packages)} pins)."
                )
        # The digest both files carry in their headers (what the lock says, not when).
        provenance["lock_digest"] = data["tool"]["agentguard"]["lock-digest"]
    if "lock_digest" not in provenance and previous is not None:
        provenance["lock_digest"] = _previous_digest(previous)  # the files as they stand
    from agentguard.lock.sites import requirement_sites

    facts["requirement_sites"] = requirement_sites(inputs)  # where SARIF places AG101/AG102
    retain(client, analysis, speculated, speculating, previous, graph)  # (see retain)
    return make_report(
        command_line(opts),
        findings,
        sources,
        target=str(root),
        inputs=provenance,
        facts=facts,
        notes=notes,
    )


def _young_releases(
    graph: LockGraph, analysis: Analysis, min_release_age: str | None
) -> tuple[list[Finding], int]:
    """AG106 from the upload times of the locked files (the earliest file of a release)."""
    import datetime as dt

    from agentguard.rules.deps_age import check_young_releases

    uploaded: dict[tuple[str, str], str | None] = {}
    for key, files in analysis.files.items():
        times = sorted(f.upload_time for f in files if f.upload_time)
        uploaded[key] = times[0] if times else None
    return check_young_releases(graph, uploaded, dt.datetime.now(dt.timezone.utc), min_release_age)


def command_line(opts: LockOptions) -> str:
    """The command as run, with the flags that change what a re-lock may move."""
    parts = ["lock", *(["--check"] if opts.check else []), *(["--upgrade"] if opts.upgrade else [])]
    parts += [f"--upgrade-package {p}" for p in opts.upgrade_packages]
    return " ".join(parts)


def _previous_digest(previous: QuickPrevious | StoredLock) -> str | None:
    from agentguard.lock.lockfile import QuickPrevious

    if isinstance(previous, QuickPrevious):
        return previous.lock_digest
    digest = previous.tool.get("lock-digest")
    return str(digest) if digest else None


@dataclass(frozen=True)
class _Speculated:
    analysis: Analysis
    graph: LockGraph
    findings: tuple[Finding, ...]
    crossings: tuple[Finding, ...]


def _outcome(future: Future[_Speculated]) -> _Speculated | None:
    """The analysis made beside the resolver, or None when it did not finish cleanly (then
    the pins are analysed again, where any error is reported the usual way)."""
    try:
        return future.result()
    except Exception:
        return None


def _speculate(
    previous: QuickPrevious,
    inputs: ProjectInputs,
    client: IndexClient,
    policy: DepsPolicy,
    allow_major: tuple[str, ...],
) -> _Speculated:
    from agentguard.lock.analysis import analyse

    analysis = analyse(previous.pins, inputs.requirement_lines(), client, watched=policy.watched)
    graph, findings, crossings = _rules(
        analysis, previous, policy, allow_major, inputs.requires_python
    )
    return _Speculated(analysis, graph, tuple(findings), tuple(crossings))


def _rules(
    analysis: Analysis,
    previous: QuickPrevious | StoredLock | None,
    policy: DepsPolicy,
    allow_major: tuple[str, ...],
    requires_python: str | None,
) -> tuple[LockGraph, list[Finding], list[Finding]]:
    """The graph with each edge's admitted majors, all AG1xx findings, and the crossings."""
    from agentguard.rules.deps import check_unknown_metadata
    from agentguard.rules.deps_gate import check_major_crossings
    from agentguard.rules.deps_spans import check_major_spans

    graph = analysis.graph
    crossings: list[Finding] = []
    if previous is not None:
        crossings = check_major_crossings(
            _previous_pins(previous), graph, allow_major, requires_python
        )
    refused = any(f.severity > Severity.INFO for f in crossings) or any(
        s.status.value == "failed" for s in analysis.sources
    )
    kept = _previous_pins(previous) if refused and previous is not None else None
    findings = [
        *check_major_spans(graph, policy, kept=kept),
        *check_unknown_metadata(graph),
        *crossings,
    ]
    return graph, findings, crossings


def _same_pins(a: tuple[LockedPackage, ...], b: tuple[LockedPackage, ...]) -> bool:
    """The same lock entries, whatever order the resolver printed them in (it orders a
    forked package's entries by marker, the lock file by version)."""
    return sorted(a, key=_pin_key) == sorted(b, key=_pin_key)


def _pin_key(p: LockedPackage) -> tuple[str, str, str, tuple[str, ...]]:
    return (p.name, p.version, p.marker or "", p.hashes)


def _wait_quietly(future: Future[Resolution]) -> None:
    """Let a resolver we no longer need finish, so no subprocess outlives the command."""
    with contextlib.suppress(ResolverError):
        future.result()


def _previous_pins(previous: QuickPrevious | StoredLock) -> tuple[LockedPackage, ...]:
    from agentguard.lock.lockfile import QuickPrevious

    return previous.pins if isinstance(previous, QuickPrevious) else previous.packages


def _previous_index(previous: QuickPrevious | StoredLock) -> tuple[str, ...]:
    from agentguard.lock.lockfile import StoredLock

    if isinstance(previous, StoredLock):
        return tuple(previous.tool.get("index-urls", []))
    for line in previous.requirements_text.splitlines()[:8]:
        if line.startswith("# index-urls:"):
            return tuple(line.split(":", 1)[1].split())
    return ()


def _same_lock(previous: QuickPrevious | StoredLock, requirements_text: str, root: Path) -> bool:
    from agentguard.lock.lockfile import QuickPrevious

    """Same pins, hashes and graph as before (the requirements lock carries the digest of
    everything in pylock.toml but its timestamp): nothing to rewrite."""
    if not isinstance(previous, QuickPrevious):
        return False
    return previous.requirements_text == requirements_text


def _edge_key(e: DependencyEdge) -> tuple[str, str, str]:
    return (e.parent, e.child, e.specifier)


def check_lock(inputs: ProjectInputs, deps: DepsPolicy | None = None) -> Report:
    """``lock --check`` (see :mod:`agentguard.lock.check`)."""
    from agentguard.lock.check import check_lock as check

    return check(inputs, deps)
