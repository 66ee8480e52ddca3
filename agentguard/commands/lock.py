"""`agentguard lock`: its options, parsed by typer, handed to agentguard.lock_command (see
:mod:`agentguard.cli` for the shared options and the exit code)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from agentguard.cli_shared import (
    ConfigOpt,
    FailOnOpt,
    FormatOpt,
    OutputOpt,
    QuietOpt,
    SarifRootOpt,
    SmokeOpt,
    SmokeTimeoutOpt,
    VerboseOpt,
    emit,
    fail_usage,
    internal_failure,
    parse_severity,
    preload,
)
from agentguard.engine import UsageError
from agentguard.findings import Severity
from agentguard.report import Format


def lock(
    project: Annotated[
        Path, typer.Argument(help="Project folder (pyproject.toml or requirements.in).")
    ] = Path("."),
    check: Annotated[
        bool,
        typer.Option(
            "--check", help="Offline: verify the lock files against the inputs; write nothing."
        ),
    ] = False,
    upgrade: Annotated[
        bool,
        typer.Option("--upgrade", "-U", help="Allow every package to move to its newest version."),
    ] = False,
    upgrade_package: Annotated[
        list[str], typer.Option("--upgrade-package", "-P", help="Allow this package to move.")
    ] = [],  # noqa: B006
    allow_major: Annotated[
        list[str],
        typer.Option("--allow-major", help="Let this package cross a major (after review)."),
    ] = [],  # noqa: B006
    extra: Annotated[
        list[str], typer.Option("--extra", help="Include this optional-dependencies group.")
    ] = [],  # noqa: B006
    all_extras: Annotated[
        bool, typer.Option("--all-extras", help="Include every optional-dependencies group.")
    ] = False,
    group: Annotated[
        list[str], typer.Option("--group", help="Include this \\[dependency-groups] group.")
    ] = [],  # noqa: B006
    index_url: Annotated[
        str | None,
        typer.Option(
            "--index-url", help="Package index (simple API); default: the resolver's own."
        ),
    ] = None,
    find_links: Annotated[
        list[str], typer.Option("--find-links", help="A folder of wheels to use as well.")
    ] = [],  # noqa: B006
    no_index: Annotated[bool, typer.Option("--no-index", help="Use only --find-links.")] = False,
    backend: Annotated[
        str, typer.Option("--backend", help="Resolver: uv (default) or pip-tools.")
    ] = "uv",
    min_release_age: Annotated[
        str | None,
        typer.Option(
            "--min-release-age",
            help="Leave out releases uploaded less than this long ago (7d, 36h, 2w).",
        ),
    ] = None,
    only_binary: Annotated[
        bool, typer.Option("--only-binary", help="Never build an sdist (runs no package code).")
    ] = False,
    config_file: ConfigOpt = None,
    export: Annotated[
        str | None,
        typer.Option(
            "--export",
            help="Also write the project's uv.lock/poetry.lock as `requirements` or `pylock`.",
        ),
    ] = None,
    timeout: Annotated[
        float | None,
        typer.Option(
            "--timeout",
            min=0.1,
            help="Seconds for the whole run (default 1800), the smoke run included; what runs "
            "out of time fails (exit 3).",
        ),
    ] = None,
    npm_registry: Annotated[
        str | None,
        typer.Option(
            "--npm-registry",
            help="npm registry for MCP server launches (default: npm_config_registry, "
            "else npm's own).",
        ),
    ] = None,
    write_launch: Annotated[
        bool,
        typer.Option(
            "--write-launch",
            help="Rewrite MCP server launches in .mcp.json-style files to the locked version.",
        ),
    ] = False,
    export_npm: Annotated[
        Path | None,
        typer.Option(
            "--export-npm",
            help="Also write each npm MCP server's locked tree to DIR/<name>-<version> "
            "(package.json, package-lock.json) for `npm ci --ignore-scripts`.",
            metavar="DIR",
        ),
    ] = None,
    smoke: SmokeOpt = None,
    smoke_timeout: SmokeTimeoutOpt = None,
    accept_tools: Annotated[
        list[str],
        typer.Option(
            "--accept-tools",
            help="With --smoke: re-record this MCP server's changed tools/list answer "
            "(package or server name, after review; NAME@sha256:DIGEST: that answer only).",
        ),
    ] = [],  # noqa: B006
    fmt: FormatOpt = Format.TEXT,
    output: OutputOpt = None,
    fail_on: FailOnOpt = None,
    verbose: VerboseOpt = False,
    quiet: QuietOpt = False,
    sarif_root: SarifRootOpt = None,
) -> None:
    """Resolve the project's whole dependency tree and write hash-pinned lock files."""
    from agentguard.lock_command import LockOptions, run_lock
    from agentguard.progress import progress

    opts = LockOptions(
        project=project,
        check=check,
        upgrade=upgrade,
        upgrade_packages=tuple(upgrade_package),
        allow_major=tuple(allow_major),
        extras=tuple(extra),
        all_extras=all_extras,
        groups=tuple(group),
        index_url=index_url,
        find_links=tuple(find_links),
        no_index=no_index,
        backend=backend,
        min_release_age=min_release_age,
        only_binary=only_binary,
        config_file=config_file,
        export=export,
        timeout=timeout,
        smoke=smoke,
        smoke_timeout=smoke_timeout,
        npm_registry=npm_registry,
        write_launch=write_launch,
        export_npm=export_npm,
        accept_tools=tuple(accept_tools),
    )
    if fail_on is not None:
        parse_severity(fail_on)
    try:
        with progress("locking", quiet=quiet) as step:
            report, configured = run_lock(opts, progress=step, warm=lambda: preload(fmt))
    except UsageError as exc:
        fail_usage(str(exc))
    except Exception as exc:  # agentguard's own failure: a report that says so, exit 3
        internal_failure(exc, "lock", str(opts.project), fmt, output, sarif_root)
    threshold = fail_on or (configured or Severity.HIGH).value
    emit(report, fmt, output, threshold, verbose=verbose, sarif_root=sarif_root)
