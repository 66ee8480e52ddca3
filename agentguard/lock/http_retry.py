"""Trying a GET again after a failure that may not recur: the connection broke after it was
made (a reset, a close, a body cut short), the answer's head did not come within the per-read
timeout, or the index answered 5xx or 429. A CDN's blip during a run that reads a hundred
pages is not a failed source, as it is not for uv (which retries three times by default).

What is never tried again: a connection that could not be made (refused, no such host, TLS),
a 4xx other than 429, an answer too large, a page that is not JSON, a refused redirect, and
anything once the run's deadline has passed. A failing index cannot multiply the run's
requests: each GET is tried at most ``1 + len(BACKOFF)`` times, an index client (a run
makes one per index and npm registry, and one for the analysis) spends at most ``BUDGET``
retries in all, and a pause never outlasts the deadline. A retry asks the URL asked for
again (a redirect chain is followed anew); a ``Retry-After`` is not read.
"""

from __future__ import annotations

import threading
import time

from agentguard.lock.deadline import Deadline
from agentguard.lock.pages import IndexError_

BACKOFF = (0.5, 2.0)  # seconds before the second and the third attempt
BUDGET = 12  # retries per run, over all its GETs


class Transient(IndexError_):
    """A failed GET that the same GET, sent again, may not meet."""

    def after(self, attempts: int) -> IndexError_:
        """The failure as the run reports it once no attempt is left."""
        if attempts == 1:
            return self
        return IndexError_(
            f"{self} (after {attempts} attempts)", code=self.code, retryable=self.retryable
        )


class Retries:
    """One index client's retry budget, shared by its threads."""

    def __init__(self, deadline: Deadline, budget: int | None = None) -> None:
        self.deadline = deadline
        self._left = BUDGET if budget is None else budget
        self._lock = threading.Lock()

    def pause(self, attempt: int) -> bool:
        """Wait before attempt ``attempt + 1`` (True), or say there is none (False): the
        GET's attempts or the run's budget are spent, or the pause would end past the deadline."""
        if attempt > len(BACKOFF):
            return False
        wait = BACKOFF[attempt - 1]
        with self._lock:
            if self._left <= 0 or self.deadline.left() <= wait:
                return False
            self._left -= 1
        time.sleep(wait)
        return True
