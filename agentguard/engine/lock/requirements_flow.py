"""`agentguard lock` on a project that agentguard locks itself (``requirements.lock`` and
``pylock.toml``): start the resolver (or take the one :mod:`agentguard.lock.early`
started), read the previous lock and the index meanwhile, analyse the pins (or take the
analysis made beside the resolver: :mod:`agentguard.engine.lock.speculation`), and hand them to
the report (:mod:`agentguard.engine.lock.lock_report`), which writes the lock files.

The modules for everything after the resolver starts (index client, lock file writer,
rules, configuration) are imported while it runs, not before.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING

from agentguard.errors import UsageError
from agentguard.findings import Finding, Report, Source
from agentguard.lock.backend import Resolution, ResolveRequest, ResolverError
from agentguard.lock.backends import BACKENDS
from agentguard.lock.inputs import ProjectInputs
from agentguard.lock.mutex import PYLOCK, REQUIREMENTS_LOCK, LockfileError
from agentguard.lock.start import LockOptions, resolve_request, retain, settings_for
from agentguard.lock.urls import clean_url

if TYPE_CHECKING:
    from pathlib import Path

    from agentguard.config import Config
    from agentguard.engine.lock.speculation import Speculated
    from agentguard.facts.fixes import FixGroup, FixSetCheck, GroupKey
    from agentguard.lock.early import Early
    from agentguard.lock.graph import LockedPackage
    from agentguard.lock.index import IndexClient
    from agentguard.lock.lockfile import QuickPrevious
    from agentguard.lock.stored import StoredLock

Progress = Callable[[str], None]


def lock_requirements(
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
    from agentguard.engine.lock import speculation
    from agentguard.engine.lock.lock_report import assemble, command_line, failed_report
    from agentguard.lock import sites as _sites  # noqa: F401
    from agentguard.lock.analysis import analyse
    from agentguard.lock.index import IndexClient, background_thread, prefetch_workers
    from agentguard.lock.lockfile import QuickPrevious, read_quick
    from agentguard.lock.previous import previous_index, previous_pins
    from agentguard.lock.stored import read_stored
    from agentguard.rules import deps as _deps  # noqa: F401  (imported while the resolver runs)

    warm()  # the caller's own (the report's renderer)

    try:
        policy = config().deps
    except UsageError:
        _wait_quietly(resolving)
        raise
    client: IndexClient | None = None
    previous: QuickPrevious | StoredLock | None = (
        early.previous if early is not None and early.previous is not None else read_quick(root)
    )
    if previous is None:
        try:
            previous = read_stored(root)
        except LockfileError as exc:
            _wait_quietly(resolving)
            return failed_report(
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
        names = sorted({p.name for p in previous_pins(previous)})
        sources.append(
            Source.ok("lockfile", REQUIREMENTS_LOCK, f"previous lock: {len(names)} packages")
        )
        # Read ahead from the index the user configured, never from the one the previous
        # lock names (a pull request's file): that one is reported, not contacted.
        from agentguard.lock.configured import configured

        guess: tuple[str, ...] = ()
        if not opts.no_index:
            allowed = configured(opts.index_url, opts.backend)
            sources.extend(allowed.skipped(previous_index(previous), REQUIREMENTS_LOCK))
            guess = allowed.urls
        logins = (opts.index_url,) if opts.index_url else ()
        ahead = early.client if early is not None else None
        if ahead is not None and (ahead.index_urls_given, tuple(ahead.find_links)) == (
            tuple(guess),
            tuple(opts.find_links),
        ):
            client = ahead  # reading these pages since the resolver started (lock.early)
        elif guess:
            if ahead is not None:
                ahead.close()
            client = IndexClient(guess, opts.find_links, logins=logins, deadline=deadline)
            client.prefetch(names, workers=prefetch_workers(len(names)))
        elif ahead is not None:
            ahead.close()
    # A re-lock mostly keeps every pin: analyse the previous pins while the resolver runs
    # (on a thread of its own), and use that analysis when the resolver returns exactly
    # those pins (same versions, markers and hashes) from the same index. Otherwise it is
    # not waited for (a dead index it guessed must not hold the run) and the pins are
    # analysed as on a first lock.
    speculating: Future[Speculated] | None = None
    speculating_with = client
    guessed_pins: tuple[LockedPackage, ...] = ()
    if early is not None and early.speculating is not None and client is early.client:
        guessed_pins = tuple(early.previous.pins if early.previous is not None else ())
        speculating = early.speculating  # started with the resolver (lock.early)
    elif client is not None and isinstance(previous, QuickPrevious):
        guessed_pins = tuple(previous.pins)
        side = ThreadPoolExecutor(1, initializer=background_thread)
        speculating = side.submit(
            speculation.speculate,
            previous,
            inputs,
            client,
            policy,
            opts.allow_major,
            _fix_check(request, previous.pins, client, root),
        )
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
        return failed_report(inputs, *sources, command=command_line(opts))
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
        speculation.outcome(speculating)
        if speculating is not None
        and speculation.same_pins(guessed_pins, resolution.pins)
        and client is speculating_with
        else None
    )
    findings: list[Finding]
    crossings: list[Finding]
    if speculated is not None:
        client.close()
        analysis, graph = speculated.analysis, speculated.graph
        findings, crossings = list(speculated.findings), list(speculated.crossings)
    else:
        try:
            analysis = analyse(
                resolution.pins, inputs.requirement_lines(), client, progress, policy.watched
            )
            graph, findings, crossings = speculation.rules(
                analysis,
                previous,
                policy,
                opts.allow_major,
                inputs.requires_python,
                _fix_check(request, resolution.pins, client, root),
            )
        finally:
            client.close()
    report = assemble(
        opts,
        inputs,
        settings,
        deadline,
        resolution,
        analysis,
        graph,
        findings,
        crossings,
        sources,
        previous,
        speculated.pylock if speculated is not None else None,
    )
    retain(client, analysis, speculated, speculating, previous, graph)  # (see retain)
    return report


def _fix_check(
    request: ResolveRequest, pins: Sequence[LockedPackage], client: IndexClient, root: Path
) -> Callable[[Mapping[GroupKey, FixGroup]], FixSetCheck]:
    """AG101's first fixes resolved as one set against ``pins`` (:mod:`agentguard.lock.fix_check`)."""
    from agentguard.lock.fix_check import checker

    return checker(request, pins, client, root)


def _wait_quietly(future: Future[Resolution]) -> None:
    """Let a resolver we no longer need finish, so no subprocess outlives the command."""
    with contextlib.suppress(ResolverError):
        future.result()
