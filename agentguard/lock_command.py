"""`agentguard lock` and `agentguard lock --check`: read the inputs, hand them to the flow
that fits the project (:mod:`agentguard.engine.lock.requirements_flow` for agentguard's own lock,
:mod:`agentguard.engine.lock.existing_flow` for a uv, Poetry or PEP 751 lock), apply the policy.

The resolver is started as soon as the project is locked (or before the command line was
read: :mod:`agentguard.lock.early`); the modules for everything after it are imported while
it runs."""

from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING

from agentguard.errors import UsageError
from agentguard.findings import Report, Severity, Source, sort_findings
from agentguard.lock.backends import BACKENDS
from agentguard.lock.deadline import Deadline
from agentguard.lock.inputs import ProjectInputs, read_inputs
from agentguard.lock.mutex import LockfileError, project_lock
from agentguard.lock.start import LockOptions as LockOptions
from agentguard.lock.start import settings_for
from agentguard.smoke.step import wanted

if TYPE_CHECKING:
    from agentguard.config import Config, DepsPolicy
    from agentguard.facts.agents import McpServer
    from agentguard.lock.servers.resolve import Resolved, ServerOptions, ServerResult

PYTHON_INPUTS = ("pyproject.toml", "requirements.in")

Progress = Callable[[str], None]


def run_lock(
    opts: LockOptions,
    progress: Progress = lambda _m: None,
    warm: Callable[[], None] = lambda: None,
) -> tuple[Report, Severity | None]:
    """The report (with the project's configuration applied) and the configured fail-on.
    ``warm`` runs while the resolver does (to import what the caller needs after it)."""
    if opts.backend not in BACKENDS:
        raise UsageError(f"unknown backend {opts.backend!r} (expected: {', '.join(BACKENDS)})")
    if opts.export_npm is not None and opts.check:
        raise UsageError(
            "--export-npm writes each npm server's locked tree; `lock --check` writes "
            "nothing: run `agentguard lock --export-npm DIR`"
        )
    root = opts.project
    # the run's: the analysis, the MCP server step and the smoke run
    started = Deadline.start(opts.timeout)
    if not opts.export and not any((root / n).is_file() for n in PYTHON_INPUTS):
        return _servers_only(opts, started)
    from agentguard.lock.early import take

    early = None if opts.check else take(opts)  # the resolver started by __main__, if any
    configured: list[Config] = []  # loaded while the resolver runs (see requirements_flow)
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
    elif opts.check:
        from agentguard.lock.project_locks import locks_to_check

        own, foreign = locks_to_check(root)  # every lock is checked: none is picked
        existing = foreign[0] if foreign else None
        inputs = read_inputs(
            root,
            extras=opts.extras,
            all_extras=opts.all_extras,
            groups=opts.groups,
            allow_urls=bool(foreign),
        )
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
    if not opts.check and existing is None and inputs.dynamic_unknown is not None:
        raise UsageError(
            "pyproject.toml declares dependencies as dynamic "
            f"({inputs.dynamic_unknown}); agentguard's own lock needs them listed in "
            "[project.dependencies] (a uv project keeps uv.lock: run `uv lock` once)"
        )

    def project_config() -> Config:
        return _config(root, configured, config_file)

    if opts.export and (opts.check or existing is None):
        raise UsageError(
            "--export writes a project's own lock (uv.lock, poetry.lock) as another format; "
            "it needs such a lock and no --check"
        )
    # the MCP servers are resolved beside the Python resolver (their round trips overlap)
    beside = None if opts.check else _start_servers(opts, project_config, started)
    if opts.check:
        from agentguard.engine.lock.every_lock import check_every_lock

        report = check_every_lock(
            root, inputs, project_config().deps, foreign, own, opts.index_url, started
        )
    else:
        try:
            with early.held if early is not None else project_lock(root):
                if existing is not None:
                    from agentguard.engine.lock.existing_flow import lock_existing

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
                        deadline=started,
                    )
                else:
                    from agentguard.engine.lock.requirements_flow import lock_requirements

                    report = lock_requirements(opts, inputs, project_config, progress, early, warm)
        except LockfileError as exc:
            from agentguard.engine.lock.lock_report import failed_report

            report = failed_report(
                inputs,
                Source.failed(
                    "lockfile",
                    str(root),
                    str(exc),
                    error_code=exc.code,
                    retryable=exc.code == "lock-busy",
                ),
            )
    config = _config(root, configured, config_file)
    report = _servers(report, opts, config, started, beside=beside)
    report = _smoke(report, opts, config, started)
    return _apply(report, config, root), config.fail_on


def _apply(report: Report, config: Config, root: Path) -> Report:
    """The project's configuration (policy, ignores, inline comments) on the report."""
    from agentguard.policy import apply_policy

    applied = apply_policy(report.findings, config, root=root)
    return dataclasses.replace(
        report,
        findings=sort_findings(applied.findings),
        sources=(*report.sources, *applied.sources),
        notes=(*report.notes, *config.notes, *applied.notes),
    )


def _servers_only(opts: LockOptions, deadline: Deadline) -> tuple[Report, Severity | None]:
    """A project with no Python inputs (a TypeScript agent, a folder of MCP configuration):
    only its MCP server launches are locked (or checked); without any, a usage error."""
    from agentguard.inspect.project.servers import project_servers
    from agentguard.lock.servers.lockfile import MCP_LOCK
    from agentguard.provenance import make_report

    root = opts.project
    config = _config(root, [], opts.config_file)
    servers, read = project_servers(root, exclude=config.exclude)
    if not servers and not (root / MCP_LOCK).exists():
        raise UsageError(f"{root}: no pyproject.toml or requirements.in to lock")
    # (MCP servers but none a registry launch: a report that says so, never exit 2)
    report = make_report(
        "lock --check" if opts.check else "lock",
        [],
        [
            Source.skipped(
                "lock",
                str(root),
                "no pyproject.toml or requirements.in: no Python dependencies to lock",
            )
        ],
        target=str(root),
    )
    report = _servers(report, opts, config, deadline, gathered=(servers, read))
    report = _smoke(report, opts, config, deadline)
    return _apply(report, config, root), config.fail_on


def _server_options(opts: LockOptions, deadline: Deadline) -> ServerOptions:
    from agentguard.lock.servers.resolve import ServerOptions

    return ServerOptions(
        root=opts.project,
        upgrade=opts.upgrade,
        upgrade_packages=opts.upgrade_packages,
        allow_major=opts.allow_major,
        npm_registry=opts.npm_registry,
        index_url=opts.index_url,
        find_links=opts.find_links,
        no_index=opts.no_index,
        only_binary=opts.only_binary,
        deadline=deadline,
    )


Gathered = tuple[tuple["McpServer", ...], tuple[Source, ...]]


def _start_servers(
    opts: LockOptions, config: Callable[[], Config], deadline: Deadline
) -> Future[tuple[Gathered, Resolved | None]]:
    """Read the project's MCP server launches and resolve them on a thread of their own
    (nothing is written there: :func:`_servers` gates and writes, holding the lock)."""
    from agentguard.inspect.project.servers import project_servers

    exclude = config().exclude

    def run() -> tuple[Gathered, Resolved | None]:
        gathered = project_servers(opts.project, exclude=exclude)
        if _nothing_to_lock(opts, gathered):
            return gathered, None
        from agentguard.engine.lock.servers import resolve_servers

        return gathered, resolve_servers(gathered[0], _server_options(opts, deadline))

    future: Future[tuple[Gathered, Resolved | None]] = Future()

    def thread() -> None:
        try:
            future.set_result(run())
        except BaseException as exc:  # (handed to the caller, raised where it waits)
            future.set_exception(exc)

    # a daemon: a run that ends early (a usage error) does not wait for the registries
    threading.Thread(target=thread, name="agentguard-mcp", daemon=True).start()
    return future


MCP_LOCK_NOTE = "mcp.lock.json"


def _nothing_to_lock(opts: LockOptions, gathered: Gathered) -> bool:
    """No MCP server launched and no ``mcp.lock.json`` (not even a link or a broken one):
    the server step would resolve, write and report nothing, and is not imported (its
    modules are a tenth of a second of a re-lock's CPU, spent beside the resolver)."""
    return (
        not gathered[0]
        and not opts.write_launch
        and not os.path.lexists(opts.project / MCP_LOCK_NOTE)
    )


def _servers(
    report: Report,
    opts: LockOptions,
    config: Config,
    deadline: Deadline,
    gathered: Gathered | None = None,
    beside: Future[tuple[Gathered, Resolved | None]] | None = None,
) -> Report:
    """The MCP servers the project launches: locked in ``mcp.lock.json``, or (``--check``)
    compared with it; ``--write-launch`` then pins the launches themselves."""
    from agentguard.inspect.project.servers import project_servers

    resolved: Resolved | None = None
    if beside is not None:
        gathered, resolved = beside.result()
    else:
        gathered = gathered or project_servers(opts.project, exclude=config.exclude)
    servers, read = gathered
    named = {s.name for s in report.sources if s.status.value != "ok"}
    if _nothing_to_lock(opts, gathered):  # (what the server flow would add: the failed reads)
        lock_failed = any(
            s.kind == "lockfile" and s.status.value == "failed" for s in report.sources
        )
        if lock_failed and not opts.check:
            return report
        unread = tuple(s for s in read if s.status.value != "ok" and s.name not in named)
        return dataclasses.replace(report, sources=(*report.sources, *unread))
    from agentguard.engine.lock.servers import check_servers, resolve_servers, write_servers

    if opts.check:
        result = check_servers(servers, opts.project)
    else:
        if any(s.kind == "lockfile" and s.status.value == "failed" for s in report.sources):
            # the Python step could not take the project (busy, a switch left half done): the
            # server lock is not written either, and the report already says why
            if not servers:
                return report
            return dataclasses.replace(
                report, notes=(*report.notes, f"{MCP_LOCK_NOTE} was not written or changed.")
            )
        server_opts = _server_options(opts, deadline)
        resolved = resolved or resolve_servers(servers, server_opts)
        try:
            with project_lock(opts.project):
                result = write_servers(resolved, server_opts)
        except LockfileError as exc:
            failed = Source.failed(
                "lockfile", str(opts.project), str(exc), error_code=exc.code,
                retryable=exc.code == "lock-busy",
            )  # fmt: skip
            return dataclasses.replace(report, sources=(*report.sources, failed))
    notes = result.notes
    if opts.export_npm is not None and result.lock is not None and not opts.check:
        from agentguard.lock.servers.npm_kit import export

        kit_notes, kit_sources = export(result.lock.pins, opts.export_npm)
        notes, read = (*notes, *kit_notes), (*read, *kit_sources)
    if opts.write_launch and not opts.check:
        from agentguard.harden.launches import write_launches

        rewritten, more = write_launches(opts.project, servers, result)
        notes, read = (*notes, *rewritten), (*read, *more)
        if any(s.status.value == "ok" for s in more):
            _record_rewritten(opts, config, result)
    # a file the lock flow already reported (a uv.lock that is a link) is reported once
    failed_reads = tuple(s for s in read if s.status.value != "ok" and s.name not in named)
    return dataclasses.replace(
        report,
        findings=(*report.findings, *result.findings),
        sources=(*report.sources, *failed_reads, *result.sources),
        notes=(*report.notes, *notes),
        facts={**report.facts, **result.facts},
    )


def _record_rewritten(opts: LockOptions, config: Config, result: ServerResult) -> None:
    """The launches ``--write-launch`` pinned, recorded as they now read (their request, a
    line a longer launch moved), so that a re-lock right after writes nothing new."""
    from agentguard.inspect.project.servers import project_servers
    from agentguard.lock.servers import lockfile
    from agentguard.lock.servers.resolve import relocated

    if result.lock is None:
        return
    servers, _ = project_servers(opts.project, exclude=config.exclude)
    pins = relocated(result.lock, servers)
    if pins is not None:
        with project_lock(opts.project):
            lockfile.write(opts.project, pins)


def _smoke(report: Report, opts: LockOptions, config: Config, deadline: Deadline) -> Report:
    """The smoke run (``--smoke``, or ``smoke = true`` from ``--config``) on the lock,
    inside the run's ``deadline``: its own budget (``--smoke-timeout``) ends by it."""
    run, note = wanted(opts.smoke, config)
    if note:
        report = dataclasses.replace(report, notes=(*report.notes, note))
    if not run:
        if opts.accept_tools:
            raise UsageError("--accept-tools re-records what the smoke run saw: it needs --smoke")
        return report
    from agentguard.lock.servers.lockfile import MCP_LOCK
    from agentguard.smoke.install import Options
    from agentguard.smoke.run import DEFAULT_TIMEOUT, SmokeOptions
    from agentguard.smoke.step import add_smoke

    # tools are recorded only into a server lock this run wrote (or found up to date): one
    # left as it was (a refused re-lock, a failed resolution) holds what the findings name
    written = any(
        s.kind == "lockfile" and s.name == MCP_LOCK and s.status.value == "ok"
        for s in report.sources
    )
    smoke = SmokeOptions(
        index=Options(opts.index_url, opts.find_links, opts.no_index),
        timeout=opts.smoke_timeout or DEFAULT_TIMEOUT,
        exclude=config.exclude,
        record_tools=written and not opts.check,
        accept_tools=opts.accept_tools,
        deadline=deadline,
    )
    if opts.accept_tools and not smoke.record_tools:
        note = (
            "--accept-tools: nothing re-recorded (lock --check compares only)"
            if opts.check
            else f"--accept-tools: nothing re-recorded ({MCP_LOCK} was not written in this run)"
        )
        report = dataclasses.replace(report, notes=(*report.notes, note))
    return add_smoke(report, opts.project, smoke)


def _config(root: Path, loaded: list[Config], config_file: Path | None = None) -> Config:
    """The project's configuration (or only ``config_file``), read once."""
    if not loaded:
        from agentguard.config import load_config

        loaded.append(load_config(root, config_file=config_file))
    return loaded[0]


def check_lock(inputs: ProjectInputs, deps: DepsPolicy | None = None) -> Report:
    """``lock --check`` (see :mod:`agentguard.engine.lock.check`)."""
    from agentguard.engine.lock.check import check_lock as check

    return check(inputs, deps)
