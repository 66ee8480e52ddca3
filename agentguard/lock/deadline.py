"""One deadline for a whole `agentguard lock` run (``--timeout``).

Every network read, the resolver and every wait on them take what is left of it, so a
slow index (one byte every few seconds never trips a per-read timeout) cannot hold a run
past it; what ran out of time is a failed source with code ``deadline-exceeded``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

DEFAULT_TIMEOUT = 1800.0  # generous: a cold lock of a large stack on a slow index
DEADLINE_CODE = "deadline-exceeded"


@dataclass(frozen=True)
class Deadline:
    seconds: float
    ends: float = field(default=0.0)
    # the run's whole --timeout, when this deadline is the share of it a step gets (`check`
    # keeps the rest to report its other steps): named so that a reason says both
    whole: float | None = None

    @staticmethod
    def start(seconds: float | None = None, whole: float | None = None) -> Deadline:
        total = DEFAULT_TIMEOUT if seconds is None else float(seconds)
        return Deadline(total, time.monotonic() + total, whole)

    def left(self) -> float:
        return max(0.0, self.ends - time.monotonic())

    @property
    def passed(self) -> bool:
        return time.monotonic() >= self.ends

    def bound(self, seconds: float) -> float:
        """``seconds``, or what is left of the run when that is less (never below 1 ms)."""
        return max(0.001, min(seconds, self.left()))

    def describe(self) -> str:
        if self.whole is not None:
            return (
                f"the run's deadline ({self.seconds:g} s of --timeout {self.whole:g}, the rest "
                "kept to report the other steps) passed"
            )
        return f"the run's deadline ({self.seconds:g} s, --timeout) passed"


NO_DEADLINE = Deadline(float("inf"), float("inf"))
