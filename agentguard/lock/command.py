"""`agentguard lock` and `agentguard lock --check`: read the inputs, hand them to the flow
that fits the project (:mod:`agentguard.lock.requirements_flow` for agentguard's own lock,
:mod:`agentguard.lock.existing_flow` for a uv, Poetry or PEP 751 lock), apply the policy.

The resolver is started as soon as the project is locked (or before the command line was
read: :mod:`agentguard.lock.early`); the modules for everything after it are imported while
it runs."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from agentguard.errors import UsageError
from agentguard.findings import Report, Severity, Source, sort_findings
from agentguard.lock.backends import BACKENDS
from agentguard.lock.inputs import ProjectInputs, read_inputs
from agentguard.lock.mutex import LockfileError, project_lock
from agentguard.lock.start import LockOptions as LockOptions
from agentguard.lock.start import settings_for

if TYPE_CHECKING:
    from agentguard.config import Config, DepsPolicy

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
    root = opts.project
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
        from agentguard.lock.every_lock import locks_to_check

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
    if opts.check:
        from agentguard.lock.every_lock import check_every_lock

        report = check_every_lock(root, inputs, project_config().deps, foreign, own, opts.index_url)
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
                    from agentguard.lock.requirements_flow import lock_requirements

                    report = lock_requirements(opts, inputs, project_config, progress, early, warm)
        except LockfileError as exc:
            from agentguard.lock.lock_report import failed_report

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
    from agentguard.policy import apply_policy

    config = _config(root, configured, config_file)
    report = _smoke(report, opts, config)
    applied = apply_policy(report.findings, config, root=root)
    report = dataclasses.replace(
        report,
        findings=sort_findings(applied.findings),
        sources=(*report.sources, *applied.sources),
        notes=(*report.notes, *config.notes, *applied.notes),
    )
    return report, config.fail_on


def _smoke(report: Report, opts: LockOptions, config: Config) -> Report:
    """The smoke run (``--smoke``, or ``smoke = true`` from ``--config``) on the lock."""
    from agentguard.smoke.step import wanted

    run, note = wanted(opts.smoke, config)
    if note:
        report = dataclasses.replace(report, notes=(*report.notes, note))
    if not run:
        return report
    from agentguard.smoke.install import Options
    from agentguard.smoke.run import DEFAULT_TIMEOUT, SmokeOptions
    from agentguard.smoke.step import add_smoke

    smoke = SmokeOptions(
        index=Options(opts.index_url, opts.find_links, opts.no_index),
        timeout=opts.smoke_timeout or DEFAULT_TIMEOUT,
        exclude=config.exclude,
    )
    return add_smoke(report, opts.project, smoke)


def _config(root: Path, loaded: list[Config], config_file: Path | None = None) -> Config:
    """The project's configuration (or only ``config_file``), read once."""
    if not loaded:
        from agentguard.config import load_config

        loaded.append(load_config(root, config_file=config_file))
    return loaded[0]


def check_lock(inputs: ProjectInputs, deps: DepsPolicy | None = None) -> Report:
    """``lock --check`` (see :mod:`agentguard.lock.check`)."""
    from agentguard.lock.check import check_lock as check

    return check(inputs, deps)
