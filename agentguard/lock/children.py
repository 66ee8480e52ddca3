"""The resolvers this process started and has not finished with (`uv pip compile`, `uv lock`
on a copy). A run that ends early (Ctrl-C, SIGTERM, a crash) stops them before the process
exits: no resolver left running, no scratch folder left behind. See agentguard.__main__."""

from __future__ import annotations

import contextlib
from typing import Protocol


class Stoppable(Protocol):
    def cancel(self) -> None: ...


_live: set[Stoppable] = set()


def started(run: Stoppable) -> None:
    _live.add(run)


def finished(run: Stoppable) -> None:
    _live.discard(run)


def stop_all() -> None:
    """Stop every resolver still running (kill it, remove its scratch folder)."""
    for run in list(_live):
        with contextlib.suppress(Exception):
            run.cancel()
