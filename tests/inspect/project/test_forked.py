"""Tasks shared with forked children: every task once, in order, whatever happens to a child."""

from __future__ import annotations

import os
import signal
import time

import pytest

from agentguard.inspect.project import forked

PARENT = os.getpid()


def _no_children_left() -> bool:
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


def _who(k: int) -> tuple[int, int]:
    time.sleep(0.002)
    return k * k, os.getpid()


def test_every_task_runs_once_and_the_results_come_back_in_order() -> None:
    head, results = forked.share(200, _who, 3, lambda: "first")
    assert head == "first"
    assert [r for r, _ in results] == [k * k for k in range(200)]
    pids = {pid for _, pid in results}
    assert PARENT in pids and len(pids) == 3  # the parent takes tasks too
    assert _no_children_left()


def test_one_job_is_this_process_alone() -> None:
    _, results = forked.share(5, _who, 1, lambda: None)
    assert results == [(k * k, PARENT) for k in range(5)]


def _die_in_a_child(k: int) -> int:
    if os.getpid() != PARENT:
        os._exit(9)  # as the OOM killer would end it
    return k


def test_tasks_a_dead_child_took_are_run_by_the_parent() -> None:
    _, results = forked.share(50, _die_in_a_child, 3, lambda: None)
    assert results == list(range(50))
    assert _no_children_left()


def _fails_on_7(k: int) -> int:
    if k == 7:
        raise ValueError("task 7")
    return k


def test_a_task_that_raises_raises_in_the_parent() -> None:
    with pytest.raises(ValueError, match="task 7"):
        forked.share(20, _fails_on_7, 2, lambda: time.sleep(0.05))  # a child takes 7 first
    assert _no_children_left()


def _slow(k: int) -> int:
    time.sleep(0.5)
    return k


def _interrupted() -> None:
    time.sleep(0.05)  # the children have each taken a task
    raise KeyboardInterrupt


def test_an_interrupt_stops_the_children_at_once() -> None:
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        forked.share(40, _slow, 3, _interrupted)
    assert time.monotonic() - started < 0.4  # not 40 tasks of 0.5 s, not even one
    assert _no_children_left()


def _signals(k: int) -> tuple[bool, bool]:
    return (
        (
            signal.getsignal(signal.SIGINT) == signal.SIG_IGN,
            signal.getsignal(signal.SIGTERM) == signal.SIG_DFL,
        )
        if os.getpid() != PARENT
        else (True, True)
    )


def test_children_leave_interrupts_to_the_parent() -> None:
    _, results = forked.share(30, _signals, 3, lambda: time.sleep(0.05))
    assert results == [(True, True)] * 30


def test_more_tasks_than_the_pipe_holds_are_all_run() -> None:
    count = 70_000  # 280 KB of task numbers: the pipe takes some, the parent runs the rest
    _, results = forked.share(count, lambda k: k, 2, lambda: None)
    assert results == list(range(count))
    assert _no_children_left()
