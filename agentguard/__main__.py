"""The command's entry point (`agentguard` and `python -m agentguard`).

A `lock` starts its resolver before the CLI is imported (:mod:`agentguard.lock.early`);
what the command does not take of it is stopped before the process ends.

Ctrl-C or SIGTERM while the CLI is still importing (its first few hundred milliseconds)
ends the run quietly with exit 130 instead of a Python traceback; once the CLI is loaded,
:func:`agentguard.cli.main` handles both (cleanups run, exit 130); once it has returned,
they are ignored while the interpreter shuts down. Neither is raised inside the import
machinery (:mod:`agentguard.interrupts`).
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentguard.lock.early import Early


def _interrupted() -> SystemExit:
    sys.stderr.write("agentguard: interrupted\n")
    return SystemExit(130)


def _quiet_interrupts(unraisable: sys.UnraisableHookArgs) -> None:
    """An interrupt that lands inside the import machinery (modules are imported lazily
    while the resolver runs) is reported by Python as "Exception ignored in ...", with a
    traceback. The interrupt itself still ends the run (exit 130); only that noise goes."""
    if isinstance(unraisable.exc_value, (KeyboardInterrupt, SystemExit)):
        return
    sys.__unraisablehook__(unraisable)


# One run is short and builds many long-lived objects (parsed index pages, syntax trees,
# findings) and few cycles: collect rarely. The default (700 allocations) spent 20-70 ms
# per full collection, collecting nothing, several times per `lock`.
GC_THRESHOLDS = (50_000, 20, 20)


def _not_from_the_folder() -> None:
    """``python -m agentguard`` puts the folder it was started in (in CI: the checkout) first
    on the import path, and every module agentguard imports later (a reader's parser, the
    pip-tools backend's ``piptools``) would be looked for there first. Dropped: agentguard's
    own modules come from its package, the others from the environment. (What Python
    imported before this runs is Python's: use the ``agentguard`` command, or ``python -P``,
    in a checkout; docs/security.md.)"""
    if getattr(sys.flags, "safe_path", False) or not sys.path:
        return
    first = sys.path[0]
    with contextlib.suppress(OSError):
        if first == "" or os.path.samefile(first, os.getcwd()):
            del sys.path[0]


def run() -> None:
    _not_from_the_folder()
    gc.set_threshold(*GC_THRESHOLDS)
    sys.unraisablehook = _quiet_interrupts
    from agentguard.interrupts import outside_imports

    early_exit = outside_imports(_interrupted)
    signal.signal(signal.SIGINT, early_exit)
    signal.signal(signal.SIGTERM, early_exit)
    code: object = 0
    try:
        if sys.argv[1:2] == ["lock"]:  # the resolver first, the command line while it runs
            from agentguard.lock.early import start
            from agentguard.lock.start import retain_until_exit

            retain_until_exit()  # this process ends with os._exit (see _leave)
            start(sys.argv[2:], _analyse)
        from agentguard.cli import main

        main()  # (its own handlers: Ctrl-C and SIGTERM unwind as KeyboardInterrupt)
    except SystemExit as exc:
        code = exc.code
    finally:  # the report is out: a late signal must not print a traceback from shutdown
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        _stop_early()
        _remove_scratch()
    _leave(code)


def _analyse(early: Early) -> None:
    """:func:`agentguard.engine.lock.early_analysis.analyse`, imported once the resolver
    runs: the engine's package and the report records it imports (10-15 ms) are not in the
    way of the resolver's start."""
    from agentguard.engine.lock.early_analysis import analyse

    analyse(early)


def _stop_early() -> None:
    """A resolver started early that the command did not take (a usage error, --help, an
    interrupt) is stopped and its scratch folder removed; so is any resolver still running
    when the command ended early (Ctrl-C, SIGTERM: agentguard.lock.children)."""
    early = sys.modules.get("agentguard.lock.early")
    if early is not None:
        with contextlib.suppress(Exception):
            early.abandon()
    children = sys.modules.get("agentguard.lock.children")
    if children is not None:
        with contextlib.suppress(Exception):
            children.stop_all()


def _remove_scratch() -> None:
    """The scratch folders a step could not remove itself (the run's deadline landed inside
    the removal, or before it): removed now, once every child that worked in one is stopped."""
    scratch = sys.modules.get("agentguard.scratch")
    if scratch is not None:
        with contextlib.suppress(Exception):
            scratch.remove_left()


def _leave(code: object) -> None:
    """End the process once its output is flushed, without tearing the interpreter down.

    Every file the command writes is closed by then, and no cleanup is left to ``atexit``;
    the teardown would free each parsed index page and syntax tree one by one, which took
    40-80 ms after the report was out. A code that is not an int is a message (exit 1), as
    with ``sys.exit``.
    """
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:
        with contextlib.suppress(OSError, ValueError):
            from agentguard.cli_shared import say

            sys.stderr.write(say(str(code)) + "\n")
        status = 1
    try:
        sys.stdout.flush()
    except (OSError, ValueError):  # a closed pipe: the report did not get out
        status = status or 1
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.flush()
    with contextlib.suppress(Exception):  # (the report is out: nothing here may change it)
        from agentguard.codetable import save_all

        save_all()
    os._exit(status)


if __name__ == "__main__":
    run()
