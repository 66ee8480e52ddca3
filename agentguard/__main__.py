"""The command's entry point (`agentguard` and `python -m agentguard`).

Ctrl-C or SIGTERM while the CLI is still importing (its first few hundred milliseconds)
ends the run quietly with exit 130 instead of a Python traceback; once the CLI is loaded,
:func:`agentguard.cli.main` handles both (cleanups run, exit 130); once it has returned,
they are ignored while the interpreter shuts down.
"""

from __future__ import annotations

import signal
import sys
from types import FrameType


def _early_exit(_signum: int, _frame: FrameType | None) -> None:
    sys.stderr.write("agentguard: interrupted\n")
    raise SystemExit(130)


def _quiet_interrupts(unraisable: sys.UnraisableHookArgs) -> None:
    """An interrupt that lands inside the import machinery (modules are imported lazily
    while the resolver runs) is reported by Python as "Exception ignored in ...", with a
    traceback. The interrupt itself still ends the run (exit 130); only that noise goes."""
    if isinstance(unraisable.exc_value, (KeyboardInterrupt, SystemExit)):
        return
    sys.__unraisablehook__(unraisable)


def run() -> None:
    sys.unraisablehook = _quiet_interrupts
    signal.signal(signal.SIGINT, _early_exit)
    signal.signal(signal.SIGTERM, _early_exit)
    from agentguard.cli import main

    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        main()
    finally:  # the report is out: a late signal must not print a traceback from shutdown
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)


if __name__ == "__main__":
    run()
