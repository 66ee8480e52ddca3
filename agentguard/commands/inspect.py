"""`agentguard inspect`: its options, parsed by typer, handed to agentguard.engine.inspect_run (see
:mod:`agentguard.cli` for the shared options and the exit code)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from agentguard.cli_shared import (
    ConfigOpt,
    FailOnOpt,
    FormatOpt,
    NoInlineIgnoresOpt,
    NoProjectConfigOpt,
    OutputOpt,
    QuietOpt,
    SarifRootOpt,
    TimeoutOpt,
    VerboseOpt,
    emit,
    fail_usage,
    internal_failure,
    out_of_time,
    parse_severity,
)
from agentguard.engine import UsageError
from agentguard.findings import Severity
from agentguard.report import Format


def inspect(
    target: Annotated[
        str,
        typer.Argument(
            help="An image (name:tag, id, digest), a container (name, id), a `docker save` "
            "tarball, an OCI layout (folder or tar), a compose file, a project folder or a file."
        ),
    ],
    kind: Annotated[
        str | None,
        typer.Option(
            "--kind",
            help="TARGET's kind when its name says nothing: image, container, archive, oci, "
            "compose, project, file, or a file kind such as dockerfile or mcp (a wrong one "
            "lists all).",
        ),
    ] = None,
    platform: Annotated[
        str | None,
        typer.Option(
            "--platform", help="os/arch or os/arch/variant to pick from a multi-platform image."
        ),
    ] = None,
    lock_file: Annotated[
        Path | None,
        typer.Option(
            "--lock",
            help="Compare installed packages with this pylock.toml (default: ./pylock.toml).",
        ),
    ] = None,
    no_lock: Annotated[bool, typer.Option("--no-lock", help="Do not use ./pylock.toml.")] = False,
    config_file: ConfigOpt = None,
    no_project_config: NoProjectConfigOpt = False,
    no_inline_ignores: NoInlineIgnoresOpt = False,
    timeout: TimeoutOpt = None,
    fmt: FormatOpt = Format.TEXT,
    output: OutputOpt = None,
    fail_on: FailOnOpt = None,
    verbose: VerboseOpt = False,
    quiet: QuietOpt = False,
    sarif_root: SarifRootOpt = None,
    no_cache: Annotated[
        bool,
        typer.Option(
            "--no-cache",
            help="Read every file of a project folder again: neither use nor write the "
            "content cache.",
        ),
    ] = False,
    cache_dir: Annotated[
        Path | None,
        typer.Option(
            "--cache-dir",
            help="Where the content cache is kept (default: the per-user cache folder; "
            "never inside the scanned folder).",
        ),
    ] = None,
) -> None:
    """Check what an agent's container can read and do: an image, a container, a saved image."""
    from agentguard.engine.inspect_run import InspectOptions, run_inspect
    from agentguard.inspect.targets import parse_kind
    from agentguard.progress import progress
    from agentguard.watchdog import RunDeadline, run_deadline

    if fail_on is not None:
        parse_severity(fail_on)
    try:
        target_kind, file_kind = parse_kind(kind)
        opts = InspectOptions(
            target=target,
            kind=target_kind,
            file_kind=file_kind,
            platform=platform,
            lock=lock_file,
            discover_lock=not no_lock,
            config_file=config_file,
            project_config=not no_project_config,
            inline_ignores=not no_inline_ignores,
            cache=not no_cache,
            cache_dir=cache_dir,
        )
        with run_deadline(timeout), progress("inspecting", quiet=quiet) as step:
            report, config = run_inspect(opts, progress=step)
    except UsageError as exc:
        fail_usage(str(exc))
    except RunDeadline as exc:
        out_of_time(exc, "inspect", target, fmt, output, sarif_root)
    except Exception as exc:  # agentguard's own failure: a report that says so, exit 3
        internal_failure(exc, "inspect", target, fmt, output, sarif_root)
    threshold = fail_on or (config.fail_on or Severity.HIGH).value
    emit(report, fmt, output, threshold, verbose=verbose, sarif_root=sarif_root)
