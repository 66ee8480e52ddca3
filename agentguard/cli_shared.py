"""What every command shares: the common options, and the way a report leaves the process
(rendered, redacted, escaped, written safely, and the exit code from the shared table)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from agentguard.engine import ExitCode, exit_code
from agentguard.findings import Report, Severity, Source
from agentguard.report import Format, render

if TYPE_CHECKING:
    from agentguard.watchdog import RunDeadline

FormatOpt = Annotated[Format, typer.Option("--format", "-f", help="Report format.")]
OutputOpt = Annotated[
    Path | None, typer.Option("--output", "-o", help="Write the report here instead of stdout.")
]
FailOnOpt = Annotated[
    str | None,
    typer.Option("--fail-on", help="Exit 1 at or above this severity (default: config, high)."),
]
ConfigOpt = Annotated[
    Path | None,
    typer.Option(
        "--config",
        help="Read only this configuration file (none in the scanned folder is read).",
    ),
]
NoProjectConfigOpt = Annotated[
    bool,
    typer.Option(
        "--no-project-config",
        help="Do not read agentguard.toml or the tool.agentguard table of pyproject.toml in the "
        "scanned folder (in CI on a pull request they are the pull request's).",
    ),
]
NoInlineIgnoresOpt = Annotated[
    bool,
    typer.Option(
        "--no-inline-ignores",
        help="Inline `agentguard: ignore[...]` comments suppress nothing.",
    ),
]
VerboseOpt = Annotated[bool, typer.Option("--verbose", "-v", help="Show every finding and source.")]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No progress or notes on stderr.")]
TimeoutOpt = Annotated[
    float | None,
    typer.Option(
        "--timeout",
        min=0.1,
        help="Seconds for the whole run (default 1800); a run out of time reports that and "
        "exits 3.",
    ),
]
SarifRootOpt = Annotated[
    Path | None,
    typer.Option(
        "--sarif-root",
        exists=True,
        file_okay=False,
        help="Make SARIF paths relative to this folder (default: the git top level).",
    ),
]


def _terminal() -> bool:
    return sys.stdout.isatty()


def _color_wanted() -> bool:
    return _terminal() and "NO_COLOR" not in os.environ


def say(message: str) -> str:
    """A message for stderr: redacted and escaped (a CI log is a terminal too: a newline
    from a file name would start a line of its own, such as an ``::error::`` command)."""
    from agentguard import escape, redact

    return escape.commands(escape.terminal(redact.text(message)))


def preload(fmt: Format) -> None:
    """Import the renderer of ``fmt`` ahead (while the resolver runs, not after it)."""
    import importlib

    names = {Format.JSON: "json_out", Format.SARIF: "sarif", Format.TEXT: "text"}
    importlib.import_module(f"agentguard.report.{names[fmt]}")


def write_result(text: str, output: Path | None) -> None:
    """The result goes to stdout or to ``--output`` (through the safe write: a link there
    is exit 2, a failed write exit 3)."""
    if output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    write_report(output, text, "report")


def emit(
    report: Report,
    fmt: Format,
    output: Path | None,
    fail_on: str,
    *,
    verbose: bool = False,
    allow_incomplete: bool = False,
    sarif_root: Path | None = None,
    show_suppressed: bool = False,
    gate_failed: bool = False,
) -> NoReturn:
    """Render the report, write it, and exit with the code from the shared table.
    ``gate_failed``: a gate other than the findings' failed (``check --base``: growth the
    policy names), so a complete run exits 1, not 0."""
    try:
        threshold = Severity.parse(fail_on)
    except ValueError as exc:
        fail_usage(str(exc))
    color = output is None and _color_wanted()
    text = render(
        report,
        fmt,
        color=color,
        verbose=verbose,
        sarif_root=sarif_root,
        show_suppressed=show_suppressed,
    )
    write_result(text, output)
    code = exit_code(report, threshold, allow_incomplete=allow_incomplete)
    if gate_failed and code is ExitCode.OK:
        code = ExitCode.FINDINGS
    raise typer.Exit(int(code))


def write_report(path: Path, text: str, what: str) -> None:
    """Write an output file safely: a link at ``path`` is a usage error (exit 2), any
    other failure to write means the run is incomplete (exit 3)."""
    from agentguard.safeio import UnsafeWrite, write_output

    try:
        write_output(path, text)
    except UnsafeWrite as exc:
        fail_usage(f"cannot write the {what}: {exc}")
    except OSError as exc:
        typer.echo(say(f"agentguard: cannot write {what} to {path}: {exc}"), err=True)
        raise typer.Exit(int(ExitCode.INCOMPLETE)) from None


def parse_severity(text: str) -> Severity:
    """A severity the user typed (``--fail-on``): a bad one is a usage error, exit 2."""
    try:
        return Severity.parse(text)
    except ValueError as exc:
        fail_usage(str(exc))


def fail_usage(message: str) -> NoReturn:
    typer.echo(say(f"agentguard: error: {message}"), err=True)
    raise typer.Exit(int(ExitCode.USAGE))


def out_of_time(
    exc: RunDeadline,
    command: str,
    target: str,
    fmt: Format,
    output: Path | None,
    sarif_root: Path | None,
    sarif_output: Path | None = None,
) -> NoReturn:
    """The run's deadline passed: a report with that one failed source, exit 3 (also under
    --allow-incomplete: a run that did not finish never passes)."""
    from agentguard.watchdog import deadline_source

    _unfinished(deadline_source(target, exc), command, fmt, output, sarif_root, sarif_output)


def internal_failure(
    exc: Exception,
    command: str,
    target: str,
    fmt: Format,
    output: Path | None,
    sarif_root: Path | None,
    sarif_output: Path | None = None,
) -> NoReturn:
    """agentguard itself failed (a bug, or an input no reader expected): still a report, with
    that one failed source, exit 3 (also under --allow-incomplete). A run that broke never
    passes, and CI that reads the JSON or SARIF finds a report that says why, not no file."""
    _unfinished(internal_error_source(exc, target), command, fmt, output, sarif_root, sarif_output)


def internal_error_source(exc: Exception, target: str) -> Source:
    """agentguard's own failure as the run's one failed source (said on stderr too);
    with AGENTGUARD_DEBUG set, the exception is raised for its traceback instead."""
    if os.environ.get("AGENTGUARD_DEBUG"):
        raise exc
    typer.echo(say(f"agentguard: internal error: {type(exc).__name__}: {exc}"), err=True)
    return Source.failed(
        "run",
        target,
        f"agentguard failed: {type(exc).__name__}: {exc}; nothing it found is reported, since "
        "it did not finish",
        error_code="internal-error",
        retryable=False,
        remedy="Set AGENTGUARD_DEBUG=1 for the traceback, and please report it.",
    )


def _unfinished(
    source: Source,
    command: str,
    fmt: Format,
    output: Path | None,
    sarif_root: Path | None,
    sarif_output: Path | None,
) -> NoReturn:
    """A run that did not finish: its one failed source, as a report in every format asked."""
    from agentguard.engine import make_report

    report = make_report(command, [], [source], target=source.name)
    if sarif_output is not None:
        write_report(sarif_output, render(report, Format.SARIF, sarif_root=sarif_root), "SARIF")
    emit(report, fmt, output, Severity.HIGH.value, sarif_root=sarif_root)


# `--smoke/--no-smoke` and its deadline, shared by lock and check (one definition)
SmokeOpt = Annotated[
    bool | None,
    typer.Option(
        "--smoke/--no-smoke",
        help="Install the lock into a scratch environment and start the agent SDK and MCP "
        "servers (runs the project's packages: opt-in; see docs/smoke.md).",
    ),
]
SmokeTimeoutOpt = Annotated[
    float | None,
    typer.Option(
        "--smoke-timeout",
        min=1.0,
        help="Seconds for the smoke run (default 900). It is inside --timeout: it also ends "
        "by the run's deadline, and what that cuts short fails (exit 3).",
    ),
]
