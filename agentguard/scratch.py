"""Private scratch folders, removed on every way out.

Each folder is removed where it is used (``with scratch_folder(...)``, or :func:`remove`);
what one of those could not finish is removed once more when the command ends
(:func:`remove_left`, which :mod:`agentguard.__main__` calls before the process exits: it
ends with ``os._exit``, so ``atexit`` never runs). That covers the run's deadline (a
``BaseException``) landing inside a removal itself, and a step that lost its folder's
owner to an exception. Only the process that made a folder removes it: a forked scan child
that returns never removes its parent's folder.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from agentguard.interrupts import held

# folder -> the pid of the process that made it
_made: dict[str, int] = {}


def make(prefix: str) -> Path:
    """A new private folder (mode 0700, as ``mkdtemp`` makes it), registered for removal:
    Ctrl-C or SIGTERM waits until it is (an interrupt between the two would leave a folder
    nothing knows of)."""
    with held():
        path = tempfile.mkdtemp(prefix=prefix)
        _made[path] = os.getpid()
    return Path(path)


def remove(path: Path | str) -> None:
    """Remove ``path`` if this process made it (an unregistered path is removed too)."""
    key = str(path)
    owner = _made.get(key)
    if owner is not None and owner != os.getpid():
        return
    shutil.rmtree(key, ignore_errors=True)
    if not os.path.lexists(key):
        _made.pop(key, None)


@contextlib.contextmanager
def scratch_folder(prefix: str) -> Iterator[Path]:
    path = make(prefix)
    try:
        yield path
    finally:
        remove(path)


def remove_left() -> None:
    """Remove every folder this process made and did not remove."""
    for key, owner in list(_made.items()):
        if owner == os.getpid():
            remove(key)


def left() -> tuple[str, ...]:
    """The folders this process made and has not removed (for tests)."""
    return tuple(k for k, pid in _made.items() if pid == os.getpid())
