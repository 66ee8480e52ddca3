"""The command line: parse -> config -> run -> render -> exit code. Nothing else lives here.

The application, its root options and the last line of defence; the shared options and the
way a report leaves the process are in :mod:`agentguard.cli_shared`, each command in its own
module (:mod:`agentguard.commands`, the catalogue's `rules` and `explain` in
:mod:`agentguard.commands.catalogue`)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Annotated

import typer

from agentguard import __version__
from agentguard.exit_codes import EXIT_CODE_TABLE, ExitCode

# (the shared options and helpers are in agentguard.cli_shared, imported by each command's
# module and where they are used here: `--version` imports neither them nor the engine)


def version_callback(value: bool) -> None:
    if value:
        typer.echo(f"agentguard {__version__}")
        raise typer.Exit(0)


def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=version_callback, is_eager=True, help="Show the version."
        ),
    ] = False,
) -> None:
    pass


def _command(name: str) -> Callable[..., None]:
    """A command's function (one module per report command: agentguard.commands)."""
    if name == "lock":
        from agentguard.commands.lock import lock

        return lock
    if name == "check":
        from agentguard.commands.check import check

        return check
    if name == "inspect":
        from agentguard.commands.inspect import inspect

        return inspect
    if name == "harden":
        from agentguard.commands.harden import harden

        return harden
    if name == "map":
        from agentguard.commands.map import map_cmd

        return map_cmd
    from agentguard.commands.catalogue import explain, rules_cmd

    return rules_cmd if name == "rules" else explain


# in the order `--help` lists them
COMMANDS = ("lock", "check", "inspect", "harden", "map", "rules", "explain")


def build(only: str | None = None) -> typer.Typer:
    """The application: every command, or only ``only``, the one a command line names
    (``""``: none, the root alone, for ``--version``).
    typer builds each command's options from its signature on every run (and imports its
    module): a run of one command, `lock` on the clock beside its resolver, pays for that
    one alone. What it parses and prints is the same either way."""
    application = typer.Typer(
        name="agentguard",
        help="Keeps AI-agent containers honest: pins what an agent stack installs and checks "
        "what the agent's container can read and do.\n\nExit codes: "
        + "; ".join(f"{code} {text}" for code, text in EXIT_CODE_TABLE),
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
    )
    application.callback()(_root)
    for name in COMMANDS:
        if only is None or name == only:
            application.command(name)(_command(name))
    return application


_APP: list[typer.Typer] = []


def __getattr__(name: str) -> typer.Typer:
    """``agentguard.cli.app``: the application with every command (built on first use)."""
    if name != "app":
        raise AttributeError(name)
    if not _APP:
        _APP.append(build())
    return _APP[0]


def main() -> None:
    import signal

    from agentguard.interrupts import outside_imports

    # SIGTERM unwinds like Ctrl-C (cleanups run: temp files, the resolver child; exit 130),
    # and neither lands inside the import machinery (see agentguard.interrupts)
    signal.signal(signal.SIGTERM, outside_imports(KeyboardInterrupt))
    signal.signal(signal.SIGINT, outside_imports(KeyboardInterrupt))
    args = sys.argv[1:2]
    only = args[0] if args and args[0] in COMMANDS else None
    if sys.argv[1:] == ["--version"]:
        only = ""  # (the root's eager option answers it: no command is built, none imported)
    try:
        build(only)()
    except KeyboardInterrupt:
        typer.echo("agentguard: interrupted", err=True)
        sys.exit(130)
    except Exception as exc:  # the last line of defence: never a traceback, never exit 0
        if os.environ.get("AGENTGUARD_DEBUG"):
            raise
        from agentguard.cli_shared import say

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
