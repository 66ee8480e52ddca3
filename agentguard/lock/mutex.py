"""One `agentguard lock` per project at a time, and the names of its two files.

Kept apart from the lock file reader and writer so that taking the lock, and starting the
resolver right after it, needs none of their imports.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import time
from collections.abc import Iterator
from pathlib import Path

from agentguard.lock.lock_names import PYLOCK as PYLOCK
from agentguard.lock.lock_names import REQUIREMENTS_LOCK as REQUIREMENTS_LOCK
from agentguard.lock.lock_names import LockfileError as LockfileError

LOCK_WAIT_SECONDS = 60.0


def remove_stale_temps(root: Path) -> None:
    """Temp files of a run that was killed (SIGKILL skips every cleanup). Only called while
    holding the project lock, so no other run is writing them."""
    for name in (PYLOCK, REQUIREMENTS_LOCK, ".agentguard-lock-switch.json"):
        for tmp in root.glob(f".{name}.agentguard-*.tmp"):
            with contextlib.suppress(OSError):
                tmp.unlink()


@contextlib.contextmanager
def project_lock(root: Path, wait: float = LOCK_WAIT_SECONDS) -> Iterator[None]:
    """One `agentguard lock` per project at a time (advisory lock on the folder itself)."""
    fd = os.open(root, os.O_RDONLY)
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                    raise
                if time.monotonic() >= deadline:
                    raise LockfileError(
                        f"another `agentguard lock` holds this project for more than {wait:.0f} s",
                        code="lock-busy",
                    ) from None
                time.sleep(0.1)
        from agentguard.lock.switch import finish_pending

        finish_pending(root)  # a switch a killed run made is finished, then litter removed
        remove_stale_temps(root)
        yield
    finally:
        os.close(fd)
