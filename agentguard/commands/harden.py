"""`agentguard harden`: its options, parsed by typer, handed to agentguard.harden.run (see
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
    VerboseOpt,
    emit,
    fail_usage,
)
from agentguard.engine import UsageError
from agentguard.findings import Severity
from agentguard.report import Format


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
    env_file: Annotated[
        str | None,
        typer.Option("--env-file", help="Pass the secrets from this file (never read by harden)."),
    ] = None,
    kind: Annotated[
        str | None, typer.Option("--kind", help="What TARGET is (as for inspect).")
    ] = None,
    platform: Annotated[
        str | None,
        typer.Option("--platform", help="os/arch or os/arch/variant of a multi-platform image."),
    ] = None,
    config_file: ConfigOpt = None,
    no_project_config: NoProjectConfigOpt = False,
    no_inline_ignores: NoInlineIgnoresOpt = False,
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
            project_config=not no_project_config,
            inline_ignores=not no_inline_ignores,
            code_mount=code_mount,
            force=force,
            verify_command=verify_command,
            settle=settle,
            env_file=env_file,
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
