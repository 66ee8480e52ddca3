"""The command line: parse -> config -> run -> render -> exit code. Nothing else lives here."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from agentguard import __version__
from agentguard.engine import EXIT_CODE_TABLE, ExitCode, UsageError, exit_code
from agentguard.findings import Report, Severity
from agentguard.report import Format, render

app = typer.Typer(
    name="agentguard",
    help="Keeps AI-agent containers honest: pins what an agent stack installs and checks "
    "what the agent's container can read and do.\n\nExit codes: "
    + "; ".join(f"{code} {text}" for code, text in EXIT_CODE_TABLE),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

FormatOpt = Annotated[Format, typer.Option("--format", "-f", help="Report format.")]
OutputOpt = Annotated[
    Path | None, typer.Option("--output", "-o", help="Write the report here instead of stdout.")
]
FailOnOpt = Annotated[
    str | None,
    typer.Option("--fail-on", help="Exit 1 at or above this severity (default: config, high)."),
]
ConfigOpt = Annotated[
    Path | None, typer.Option("--config", help="Read only this configuration file.")
]
VerboseOpt = Annotated[bool, typer.Option("--verbose", "-v", help="Show every finding and source.")]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No progress or notes on stderr.")]
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
    from agentguard import redact
    from agentguard.report.text import visible

    return visible(redact.text(message))


def _preload(fmt: Format) -> None:
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
) -> None:
    """Render the report, write it, and exit with the code from the shared table."""
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
    raise typer.Exit(int(exit_code(report, threshold, allow_incomplete=allow_incomplete)))


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


def fail_usage(message: str) -> typer.Exit:
    typer.echo(say(f"agentguard: error: {message}"), err=True)
    raise typer.Exit(int(ExitCode.USAGE))


def version_callback(value: bool) -> None:
    if value:
        typer.echo(f"agentguard {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=version_callback, is_eager=True, help="Show the version."
        ),
    ] = False,
) -> None:
    pass


@app.command()
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
            help="Seconds for the whole run (default 1800); what runs out of time fails (exit 3).",
        ),
    ] = None,
    fmt: FormatOpt = Format.TEXT,
    output: OutputOpt = None,
    fail_on: FailOnOpt = None,
    verbose: VerboseOpt = False,
    quiet: QuietOpt = False,
    sarif_root: SarifRootOpt = None,
) -> None:
    """Resolve the project's whole dependency tree and write hash-pinned lock files."""
    from agentguard.lock.command import LockOptions, run_lock
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
    )
    try:
        if fail_on is not None:
            Severity.parse(fail_on)
        with progress("locking", quiet=quiet) as step:
            report, configured = run_lock(opts, progress=step, warm=lambda: _preload(fmt))
    except (UsageError, ValueError) as exc:
        fail_usage(str(exc))
    threshold = fail_on or (configured or Severity.HIGH).value
    emit(report, fmt, output, threshold, verbose=verbose, sarif_root=sarif_root)


@app.command()
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
    fmt: FormatOpt = Format.TEXT,
    output: OutputOpt = None,
    verbose: VerboseOpt = False,
    quiet: QuietOpt = False,
    sarif_root: SarifRootOpt = None,
) -> None:
    """The gate before deploy: lock --check, the project-folder rules and each image, one exit code."""
    from agentguard.check import CheckOptions, run_check
    from agentguard.progress import progress

    opts = CheckOptions(
        project=project,
        images=tuple(image),
        images_from_compose=images_from_compose,
        config_file=config_file,
        baseline=baseline,
        write_baseline=write_baseline,
    )
    try:
        if fail_on is not None:
            Severity.parse(fail_on)
        with progress("checking", quiet=quiet) as step:
            result = run_check(opts, progress=step)
    except (UsageError, ValueError) as exc:
        fail_usage(str(exc))
    threshold = fail_on or result.fail_on.value
    if sarif_output is not None:
        sarif = render(result.report, Format.SARIF, sarif_root=sarif_root)
        write_report(sarif_output, sarif, "SARIF")
    emit(
        result.report,
        fmt,
        output,
        threshold,
        verbose=verbose,
        allow_incomplete=allow_incomplete,
        sarif_root=sarif_root,
    )


@app.command()
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
    fmt: FormatOpt = Format.TEXT,
    output: OutputOpt = None,
    fail_on: FailOnOpt = None,
    verbose: VerboseOpt = False,
    quiet: QuietOpt = False,
    sarif_root: SarifRootOpt = None,
) -> None:
    """Check what an agent's container can read and do: an image, a container, a saved image."""
    from agentguard.inspect.run import InspectOptions, run_inspect
    from agentguard.inspect.targets import parse_kind
    from agentguard.progress import progress

    try:
        if fail_on is not None:
            Severity.parse(fail_on)
        target_kind, file_kind = parse_kind(kind)
        opts = InspectOptions(
            target=target,
            kind=target_kind,
            file_kind=file_kind,
            platform=platform,
            lock=lock_file,
            discover_lock=not no_lock,
            config_file=config_file,
        )
        with progress("inspecting", quiet=quiet) as step:
            report, config = run_inspect(opts, progress=step)
    except (UsageError, ValueError) as exc:
        fail_usage(str(exc))
    threshold = fail_on or (config.fail_on or Severity.HIGH).value
    emit(report, fmt, output, threshold, verbose=verbose, sarif_root=sarif_root)


@app.command()
def harden(
    target: Annotated[
        str,
        typer.Argument(help="As for inspect: an image, a container, a compose file, a project."),
    ],
    out: Annotated[
        Path, typer.Option("--out", help="Write the hardened configuration here.")
    ] = Path("agentguard-hardened"),
    network: Annotated[
        str,
        typer.Option("--network", help="none (no egress), or the name of a network to join."),
    ] = "none",
    allow_mount: Annotated[
        list[str],
        typer.Option(
            "--allow-mount",
            help="HOST:CONTAINER data the agent needs, mounted read-only outside its workdir.",
        ),
    ] = [],  # noqa: B006
    user: Annotated[str, typer.Option("--user", help="Numeric UID:GID to run as.")] = (
        "10001:10001"
    ),
    workdir: Annotated[
        str, typer.Option("--workdir", help="The agent's empty working directory (a tmpfs).")
    ] = "/work",
    memory: Annotated[str, typer.Option("--memory", help="Memory limit.")] = "1g",
    pids: Annotated[int, typer.Option("--pids", help="Process limit.")] = 256,
    verify: Annotated[
        bool,
        typer.Option(
            "--verify", help="Run the image with the written config on the engine and probe."
        ),
    ] = False,
    verify_command: Annotated[
        str | None,
        typer.Option(
            "--verify-command", help="With --verify: run this in the started agent; 0 = it works."
        ),
    ] = None,
    settle: Annotated[
        float, typer.Option("--settle", help="Seconds the agent must keep running (--verify).")
    ] = 5.0,
    code_mount: Annotated[
        bool,
        typer.Option(
            "--code-mount", help="Mount the agent's code read-only instead of building an image."
        ),
    ] = False,
    force: Annotated[
        bool, typer.Option("--force", help="Overwrite files you changed since harden wrote them.")
    ] = False,
    kind: Annotated[
        str | None, typer.Option("--kind", help="What TARGET is (as for inspect).")
    ] = None,
    platform: Annotated[
        str | None,
        typer.Option("--platform", help="os/arch or os/arch/variant of a multi-platform image."),
    ] = None,
    config_file: ConfigOpt = None,
    fmt: FormatOpt = Format.TEXT,
    output: OutputOpt = None,
    fail_on: FailOnOpt = None,
    verbose: VerboseOpt = False,
    quiet: QuietOpt = False,
    sarif_root: SarifRootOpt = None,
) -> None:
    """Write the hardened run configuration (docker run, compose, Kubernetes, agent options,
    dependency caps) and, with --verify, prove it on the engine."""
    from agentguard.harden.model import HardenOptions, OptionError, parse_allow_mount
    from agentguard.harden.run import run_harden
    from agentguard.inspect.targets import Kind
    from agentguard.progress import progress

    try:
        if fail_on is not None:
            Severity.parse(fail_on)
        if kind is not None and kind not in {k.value for k in Kind}:
            kinds = ", ".join(k.value for k in Kind)
            raise UsageError(f"unknown --kind {kind!r} (expected one of: {kinds})")
        opts = HardenOptions(
            target=target,
            kind=kind,
            out=out,
            network=network,
            allow_mounts=tuple(parse_allow_mount(m) for m in allow_mount),
            user=user,
            workdir=workdir,
            memory=memory,
            pids=pids,
            verify=verify,
            platform=platform,
            config_file=config_file,
            code_mount=code_mount,
            force=force,
            verify_command=verify_command,
            settle=settle,
        )
        with progress("hardening", quiet=quiet) as step:
            result = run_harden(opts, progress=step)
    except (UsageError, OptionError, ValueError) as exc:
        fail_usage(str(exc))
    threshold = fail_on or (result.config.fail_on or Severity.HIGH).value
    # what harden fixed is marked suppressed: always listed
    emit(
        result.report,
        fmt,
        output,
        threshold,
        verbose=verbose,
        sarif_root=sarif_root,
        show_suppressed=True,
    )


@app.command("rules")
def rules_cmd(fmt: FormatOpt = Format.TEXT, output: OutputOpt = None) -> None:
    """List every rule: id, name, default severity, title."""
    from agentguard.report.catalogue import render_catalogue
    from agentguard.rules.base import all_rules

    terminal = output is None and _terminal()
    text = render_catalogue(
        all_rules(), fmt, page=False, terminal=terminal, color=terminal and _color_wanted()
    )
    write_result(text, output)


@app.command()
def explain(
    rule_id: Annotated[str, typer.Argument(help="A rule id, e.g. AG101.")],
    fmt: FormatOpt = Format.TEXT,
    output: OutputOpt = None,
) -> None:
    """Print a rule's page: what it checks, why it matters, an example, what to do instead."""
    from agentguard.report.catalogue import render_catalogue
    from agentguard.rules.base import get_rule

    try:
        rule = get_rule(rule_id)
    except KeyError as exc:
        fail_usage(str(exc.args[0]))
    terminal = output is None and _terminal()
    text = render_catalogue(
        [rule], fmt, page=True, terminal=terminal, color=terminal and _color_wanted()
    )
    write_result(text, output)


def _terminated(signum: int, _frame: object) -> None:
    """SIGTERM unwinds like Ctrl-C (cleanups run: temp files, the resolver child; exit 130)."""
    raise KeyboardInterrupt


def main() -> None:
    import signal

    signal.signal(signal.SIGTERM, _terminated)
    try:
        app()
    except KeyboardInterrupt:
        typer.echo("agentguard: interrupted", err=True)
        sys.exit(130)
    except Exception as exc:  # the last line of defence: never a traceback, never exit 0
        if os.environ.get("AGENTGUARD_DEBUG"):
            raise
        typer.echo(
            say(
                f"agentguard: internal error: {type(exc).__name__}: {exc} -- the run is "
                "incomplete (set AGENTGUARD_DEBUG=1 for the traceback, and please report it)"
            ),
            err=True,
        )
        sys.exit(int(ExitCode.INCOMPLETE))


if __name__ == "__main__":
    main()
