"""Ctrl-C and SIGTERM held over a step that must not be cut in two.

The interrupt is not lost: it is delivered as the step ends, where the code around it can
clean up what the step made (a folder made and registered, a child started and held).
Without it an interrupt landing inside ``subprocess.Popen`` after the fork leaves a child
that no handle names: nothing can stop it.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator

INTERRUPTS = frozenset({signal.SIGINT, signal.SIGTERM})


@contextlib.contextmanager
def held() -> Iterator[None]:
    """Hold SIGINT and SIGTERM in this thread until the block ends. (A child started inside
    starts with them held too: its parent, which holds its handle, stops it.)"""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    before = signal.pthread_sigmask(signal.SIG_BLOCK, INTERRUPTS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)
