"""The smoke run's deadline: its own budget (``--smoke-timeout``) inside the run's
(``--timeout``, :class:`~agentguard.lock.deadline.Deadline`), whichever ends first.

Each part of the run (the install, the probe child, one stdio server) takes its own share,
capped by what is left of both. A part the run's deadline cut short did not get the time
it would have had: it is a failed source ``deadline-exceeded`` (the run is incomplete,
exit 3), never a finding about the lock, never a skipped source and never a clean run.
A part that ran out of the smoke run's own budget is reported as before (a hang past it
is the part's failure; what it did not get to is skipped).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from agentguard.findings import Source
from agentguard.lock.deadline import DEADLINE_CODE, NO_DEADLINE, Deadline

REMEDY = (
    "Give the run more time with --timeout (the smoke run counts against it, and ends by "
    "it), then re-run."
)


@dataclass(frozen=True)
class Budget:
    """The seconds one part gets, and the run's deadline (described) when that is what
    bounds them (None: the part's own limit, or the smoke run's, is the nearer)."""

    seconds: float
    cut: str | None

    @property
    def spent(self) -> bool:
        return self.seconds <= 0


@dataclass(frozen=True)
class Clock:
    own: float  # time.monotonic() at which the smoke run's own budget ends
    run: Deadline = NO_DEADLINE  # the run's (--timeout)

    @staticmethod
    def start(seconds: float, run: Deadline = NO_DEADLINE) -> Clock:
        return Clock(time.monotonic() + seconds, run)

    def within(self, seconds: float) -> Clock:
        """A part's clock: ``seconds`` from now, or less when the smoke run ends sooner."""
        return Clock(min(self.own, time.monotonic() + seconds), self.run)

    def budget(self, cap: float = math.inf) -> Budget:
        """``cap`` seconds, or what is left when that is less (never below zero)."""
        now = time.monotonic()
        own = min(cap, self.own - now)
        run = self.run.ends - now
        if run <= own:
            return Budget(max(0.0, run), self.run.describe())
        return Budget(max(0.0, own), None)


def cut_short(kind: str, name: str, what: str, cut: str) -> Source:
    """``what`` (one part of the smoke run) did not get its time: ``cut`` said why."""
    return Source.failed(
        kind,
        name,
        f"{what}: {cut} (the smoke run counts against it)",
        error_code=DEADLINE_CODE,
        retryable=True,
        remedy=REMEDY,
    )
