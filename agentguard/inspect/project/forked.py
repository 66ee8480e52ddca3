"""Tasks shared between this process and forked copies of it (Linux), for the project scan.

:func:`share` forks ``jobs - 1`` children after the walk; they inherit everything the
tasks need (the candidate list: nothing is pickled on the way in) and this process takes
tasks too, once its own first job is done, so that ``jobs`` processes keep ``jobs`` CPUs
busy to the end. Task numbers wait in a pipe that every process reads one record at a
time (a pipe read is atomic); a child sends back the results of the tasks it took, in
one pickle, when the pipe is empty.

Never a gap, never a hang: a child that dies (killed, out of memory) or fails leaves its
tasks to this process, which runs them itself (a task that raises raises here); a task
that did not fit in the pipe is run here too. An interrupt stops the children (they
leave SIGINT to this process and end quietly on SIGTERM) and is raised on.
"""

from __future__ import annotations

import contextlib
import gc
import os
import pickle
import signal
import struct
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

_RECORD = struct.Struct("<I")  # one task number
_BATCH = 4096 // _RECORD.size  # records per write: a pipe write up to 4096 bytes is atomic


def share(
    count: int, task: Callable[[int], T], jobs: int, first: Callable[[], R]
) -> tuple[R, list[T]]:
    """``(first(), [task(0), ..., task(count - 1)])``, the tasks run by ``jobs`` processes:
    this one (after ``first``) and ``jobs - 1`` forked children. ``jobs`` <= 1, or a
    fork that fails, leaves more (or all) of the tasks to this process."""
    read_end, write_end = os.pipe()
    children: list[tuple[int, int]] = []
    try:
        shared = _offer(write_end, count)
        os.close(write_end)
        write_end = -1
        gc.freeze()  # the children's collections then leave the inherited objects alone
        try:
            for _ in range(max(0, jobs - 1) if shared else 0):
                child = _fork(read_end, task)
                if child is None:
                    break
                children.append(child)
        finally:
            gc.unfreeze()
        head = first()
        done = _take(read_end, task)
        while children:
            done.update(_collect(*children[0]))
            os.close(children.pop(0)[1])
        for k in range(count):  # not offered, or taken by a child that did not answer
            if k not in done:
                done[k] = task(k)
        return head, [done[k] for k in range(count)]
    except BaseException:
        _stop(children)
        raise
    finally:
        os.close(read_end)
        if write_end >= 0:
            os.close(write_end)


def _offer(fd: int, count: int) -> int:
    """Write task numbers into the pipe while it takes them without blocking (64 KiB
    holds 16,384; a pipe made small by the system's limits holds fewer): how many."""
    os.set_blocking(fd, False)
    offered = 0
    while offered < count:
        batch = range(offered, min(count, offered + _BATCH))
        try:
            os.write(fd, b"".join(_RECORD.pack(k) for k in batch))
        except BlockingIOError:
            break
        offered += len(batch)
    return offered


def _take(fd: int, task: Callable[[int], T]) -> dict[int, T]:
    done: dict[int, T] = {}
    while record := os.read(fd, _RECORD.size):
        (k,) = _RECORD.unpack(record)
        done[k] = task(k)
    return done


def _fork(tasks: int, task: Callable[[int], T]) -> tuple[int, int] | None:
    """A child taking tasks: (its pid, the end its results arrive on), or None."""
    read_end, write_end = os.pipe()
    try:
        pid = os.fork()
    except OSError:  # no more processes or memory: the tasks are left to this process
        os.close(read_end)
        os.close(write_end)
        return None
    if pid:
        os.close(write_end)
        return pid, read_end
    code = 1
    try:  # the child: it never returns, never runs the parent's exit handlers
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.close(read_end)
        view = memoryview(pickle.dumps(_take(tasks, task), pickle.HIGHEST_PROTOCOL))
        while view:
            view = view[os.write(write_end, view) :]
        code = 0
    except BaseException:  # its tasks are run again by the parent, which then raises
        pass
    finally:
        os._exit(code)


def _collect(pid: int, fd: int) -> dict[int, T]:
    """What a child sent, once it has ended; empty when it failed or was killed."""
    chunks: list[bytes] = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    _, status = os.waitpid(pid, 0)
    if status != 0 or not chunks:
        return {}
    got: dict[int, T] = pickle.loads(b"".join(chunks))  # our own child's results
    return got


def _stop(children: list[tuple[int, int]]) -> None:
    """Interrupted (or failed): end the children now and reap them."""
    for pid, _ in children:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    for pid, fd in children:
        os.close(fd)
        with contextlib.suppress(ChildProcessError):  # reaped already
            os.waitpid(pid, 0)
