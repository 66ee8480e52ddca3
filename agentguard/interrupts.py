"""Ctrl-C and SIGTERM held over a step that must not be cut in two.

The interrupt is not lost: it is delivered as the step ends, where the code around it can
clean up what the step made (a folder made and registered, a child started and held).
Without it an interrupt landing inside ``subprocess.Popen`` after the fork leaves a child
that no handle names: nothing can stop it.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType

INTERRUPTS = frozenset({signal.SIGINT, signal.SIGTERM})
Handler = Callable[[int, "FrameType | None"], None]


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


_IMPORT_MACHINERY = "<frozen importlib"
AGAIN_AFTER = 0.02  # seconds: an import step is far shorter


def _importing(frame: FrameType | None) -> bool:
    while frame is not None:
        if frame.f_code.co_filename.startswith(_IMPORT_MACHINERY):
            return True
        frame = frame.f_back
    return False


def outside_imports(make: Callable[[], BaseException]) -> Handler:
    """A signal handler that raises ``make()``, never inside the import machinery: there an
    exception can be lost (one raised in a weakref callback of ``_get_module_lock`` is only
    printed, as "Exception ignored") with the global import lock still held, and every other
    thread that imports then waits for ever (a `lock` interrupted while its threads imported
    lazily hung so). Inside it, the signal is raised again a moment later; the main thread
    takes it once it is out."""

    def handler(signum: int, frame: FrameType | None) -> None:
        if _importing(frame) and hasattr(signal, "pthread_kill"):
            # to the main thread itself: a signal another thread takes would not wake a
            # main thread blocked in a wait (only the thread a signal lands on sees EINTR)
            main = threading.main_thread().ident
            assert main is not None
            again = threading.Timer(AGAIN_AFTER, signal.pthread_kill, (main, signum))
            again.daemon = True
            again.start()
            return
        raise make()

    return handler
