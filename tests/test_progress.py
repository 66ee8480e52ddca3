"""Progress: a spinner on stderr only when it is a terminal and not --quiet."""

from __future__ import annotations

import io
import os
import pty
import time

from agentguard.progress import progress


def test_nothing_is_written_when_the_stream_is_not_a_terminal() -> None:
    stream = io.StringIO()
    with progress("resolving", stream=stream) as step:
        step("layer 1/3")
        assert step.shown is False
    assert stream.getvalue() == ""


def test_a_spinner_is_drawn_on_a_terminal_and_quiet_silences_it() -> None:
    master, slave = pty.openpty()
    try:
        with os.fdopen(os.dup(slave), "w") as tty:
            assert tty.isatty()
            with progress("resolving", quiet=True, stream=tty) as step:
                assert step.shown is False
            with progress("resolving", stream=tty) as step:
                assert step.shown is True
                step("layer 2/3")
                time.sleep(0.4)  # the spinner refreshes on its own thread
            tty.flush()
        drawn = os.read(master, 65536).decode("utf-8", errors="replace")
    finally:
        os.close(master)
        os.close(slave)
    assert "layer 2/3" in drawn
