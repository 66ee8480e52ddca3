"""A deadline for a whole `inspect` or `check` run (`--timeout`, default 1800 s).

A CI gate runs on inputs it does not control: a tree, an image or an engine that makes it
read for hours must end it, with a report that says so, never a job that runs until the
runner kills it. At the deadline the run is interrupted wherever it is (a timer signal in
the main thread; forked scan children are stopped by their parent on the way out, worker
threads finish their current read), and the command reports one failed source
``deadline-exceeded`` and exits 3 (incomplete): what had been found is not reported as if
the run had looked everywhere. `lock` has its own deadline, which also bounds each index
read and the resolver (:mod:`agentguard.lock.deadline`).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType

from agentguard.findings import Source

DEFAULT_TIMEOUT = 1800.0


class RunDeadline(BaseException):
    """The run's time is up. A BaseException: a step's own error handling (which turns a
    crash into a failed source and goes on with the next step) must not swallow it."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"the run did not finish within {seconds:g} s")
        self.seconds = seconds


@contextlib.contextmanager
def run_deadline(seconds: float | None) -> Iterator[None]:
    """Raise :class:`RunDeadline` in this (main) thread once ``seconds`` have passed.

    Without a timer signal (not POSIX) or off the main thread, the run is not bounded."""
    limit = DEFAULT_TIMEOUT if seconds is None else seconds
    if (
        not hasattr(signal, "setitimer")
        or threading.current_thread() is not threading.main_thread()
    ):
        yield
        return

    def fire(_signum: int, _frame: FrameType | None) -> None:
        signal.setitimer(signal.ITIMER_REAL, 0)
        raise RunDeadline(limit)

    previous = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def deadline_source(target: str, exc: RunDeadline) -> Source:
    return Source.failed(
        "run",
        target,
        f"{exc} (--timeout {exc.seconds:g}): nothing it found is reported, since it did not "
        "look everywhere",
        error_code="deadline-exceeded",
        retryable=True,
        remedy="Raise --timeout, or leave out what takes long (`exclude` in [tool.agentguard], "
        "fewer --image targets).",
    )
