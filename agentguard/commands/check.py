"""`agentguard check`: its options, parsed by typer, handed to agentguard.check (see
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
    SmokeOpt,
    SmokeTimeoutOpt,
    TimeoutOpt,
    VerboseOpt,
    emit,
    fail_usage,
    internal_failure,
    out_of_time,
    parse_severity,
    write_report,
)
from agentguard.engine import UsageError
from agentguard.report import Format, render


def check(
    project: Annotated[Path, typer.Argument(help="Project folder.")] = Path("."),
    image: Annotated[
        list[str], typer.Option("--image", help="Also inspect this image (reference or tarball).")
    ] = [],  # noqa: B006
    images_from_compose: Annotated[
        bool,
        typer.Option(
            "--images-from-compose", help="Also inspect the images the compose file names."
        ),
    ] = False,
    allow_incomplete: Annotated[
        bool,
        typer.Option(
            "--allow-incomplete", help="Exit 0/1 even when a source failed (still reported)."
        ),
    ] = False,
    fail_on: FailOnOpt = None,
    config_file: ConfigOpt = None,
    no_project_config: NoProjectConfigOpt = False,
    no_inline_ignores: NoInlineIgnoresOpt = False,
    baseline: Annotated[
        Path | None, typer.Option("--baseline", help="Suppress the findings recorded in this file.")
    ] = None,
    write_baseline: Annotated[
        Path | None,
        typer.Option("--write-baseline", help="Record the current findings here (adopt the gate)."),
    ] = None,
    sarif_output: Annotated[
        Path | None,
        typer.Option("--sarif-output", help="Also write the report as SARIF here (for CI)."),
    ] = None,
    base: Annotated[
        str | None,
        typer.Option(
            "--base",
            help="Report only what the change since this git revision adds (and what it "
            "resolves), read from git without a checkout.",
        ),
    ] = None,
    summary: Annotated[
        Path | None,
        typer.Option(
            "--summary",
            help="Also write a short Markdown summary here (a job summary, a PR comment).",
        ),
    ] = None,
    timeout: TimeoutOpt = None,
    smoke: SmokeOpt = None,
    smoke_timeout: SmokeTimeoutOpt = None,
    fmt: FormatOpt = Format.TEXT,
    output: OutputOpt = None,
    verbose: VerboseOpt = False,
    quiet: QuietOpt = False,
    sarif_root: SarifRootOpt = None,
) -> None:
    """The gate before deploy: lock --check, the project-folder rules and each image, one exit code."""
    from agentguard.check import CheckOptions, run_check
    from agentguard.progress import progress
    from agentguard.watchdog import RunDeadline, run_deadline

    opts = CheckOptions(
        project=project,
        images=tuple(image),
        images_from_compose=images_from_compose,
        config_file=config_file,
        project_config=not no_project_config,
        inline_ignores=not no_inline_ignores,
        baseline=baseline,
        write_baseline=write_baseline,
        smoke=smoke,
        smoke_timeout=smoke_timeout,
        base=base,
        timeout=timeout,
    )
    if fail_on is not None:
        parse_severity(fail_on)
    try:
        if base is not None and (not base.strip() or base.startswith("-")):
            raise UsageError(f"--base {base!r}: not a git revision")
        with run_deadline(timeout), progress("checking", quiet=quiet) as step:
            result = run_check(opts, progress=step)
    except UsageError as exc:
        fail_usage(str(exc))
    except RunDeadline as exc:
        out_of_time(exc, "check", str(project), fmt, output, sarif_root, sarif_output)
    except Exception as exc:  # agentguard's own failure: a report that says so, exit 3
        internal_failure(exc, "check", str(project), fmt, output, sarif_root, sarif_output)
    threshold = fail_on or result.fail_on.value
    if sarif_output is not None:
        sarif = render(result.report, Format.SARIF, sarif_root=sarif_root)
        write_report(sarif_output, sarif, "SARIF")
    if summary is not None:
        from agentguard.report.summary_md import render_summary

        write_report(summary, render_summary(result.report, parse_severity(threshold)), "summary")
    emit(
        result.report,
        fmt,
        output,
        threshold,
        verbose=verbose,
        allow_incomplete=allow_incomplete,
        sarif_root=sarif_root,
        gate_failed=result.growth,
    )
