"""Progress for long steps, for people: a spinner on stderr, only on a TTY.

Machine formats go to stdout and are never mixed with progress; when stderr is not a
terminal (CI logs, pipes) or ``--quiet`` was given, nothing is shown at all.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from rich.status import Status


class Progress:
    """Callable as ``progress("resolving...")``: updates the spinner text (or does nothing)."""

    def __init__(self, status: Status | None) -> None:
        self._status = status

    @property
    def shown(self) -> bool:
        return self._status is not None

    def __call__(self, message: str) -> None:
        if self._status is not None:
            from rich.text import Text

            from agentguard import escape, redact

            self._status.update(Text(escape.commands(escape.terminal(redact.text(message)))))


def wanted(stream: TextIO, *, quiet: bool) -> bool:
    return not quiet and stream.isatty() and os.environ.get("TERM") != "dumb"


@contextmanager
def progress(
    message: str, *, quiet: bool = False, stream: TextIO | None = None
) -> Iterator[Progress]:
    """``with progress("inspecting", quiet=q) as step: step("layer 3/9")``."""
    out = stream if stream is not None else sys.stderr
    if not wanted(out, quiet=quiet):
        yield Progress(None)
        return
    from rich.console import Console

    console = Console(file=out, no_color="NO_COLOR" in os.environ, highlight=False)
    from rich.text import Text

    with console.status(Text(message)) as status:
        yield Progress(status)
