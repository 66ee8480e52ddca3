"""An interrupt never lands inside the import machinery: there an exception raised in a
weakref callback of ``_get_module_lock`` is only printed, with the global import lock still
held, and every thread that imports then waits for ever (a `lock` interrupted while its
threads imported lazily hung so, found by the lock fault test under load). Inside it the
signal is raised again a moment later; outside it, it raises at once."""

from __future__ import annotations

import signal
import sys
import time
from types import FrameType

import pytest

from agentguard.interrupts import held, outside_imports


def _frame_in(filename: str) -> FrameType:
    """A frame whose code says it is ``filename`` (as the import machinery's frames do)."""
    namespace: dict[str, object] = {"sys": sys}
    exec(compile("def here():\n    return sys._getframe()\n", filename, "exec"), namespace)
    frame = namespace["here"]()  # type: ignore[operator]
    assert isinstance(frame, FrameType)
    return frame


def test_outside_the_import_machinery_the_interrupt_raises_at_once() -> None:
    handler = outside_imports(KeyboardInterrupt)
    with pytest.raises(KeyboardInterrupt):
        handler(signal.SIGINT, _frame_in(__file__))


def test_inside_the_import_machinery_it_is_raised_again_outside() -> None:
    got: list[int] = []
    previous = signal.signal(signal.SIGUSR1, lambda signum, _f: got.append(signum))
    try:
        handler = outside_imports(KeyboardInterrupt)
        handler(signal.SIGUSR1, _frame_in("<frozen importlib._bootstrap>"))  # no raise here
        until = time.monotonic() + 10
        while not got and time.monotonic() < until:
            time.sleep(0.01)
    finally:
        signal.signal(signal.SIGUSR1, previous)
    assert got == [signal.SIGUSR1]


def test_held_interrupts_wait_for_the_block_to_end() -> None:
    got: list[int] = []
    previous = signal.signal(signal.SIGTERM, lambda signum, _f: got.append(signum))
    try:
        with held():
            signal.raise_signal(signal.SIGTERM)
            time.sleep(0.05)
            assert got == []
        assert got == [signal.SIGTERM]
    finally:
        signal.signal(signal.SIGTERM, previous)
