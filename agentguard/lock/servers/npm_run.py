"""One bounded run of npm: its own session (process group), its output read beside it and
capped (the tail is kept: npm says why it failed last), its wait bounded by the run's
deadline, and the whole group killed when that passes, when the run is interrupted
(:mod:`agentguard.lock.children` stops every child still running before the process
exits) or when it ends: nothing npm started (git, a shell) outlives it."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from agentguard.interrupts import held
from agentguard.lock import children

MAX_OUTPUT = 256 * 1024  # bytes of npm's output kept (its tail)


def machine_path(project: Path | None) -> str:
    """``PATH`` with the machine's folders only: no relative entry (`.` or
    `node_modules/.bin` names a folder of wherever agentguard was started, often the project
    under review) and no folder inside ``project`` (CI often adds the checkout's own
    `$PWD/node_modules/.bin`): an `npm` there, or the `node` npm's `#!/usr/bin/env node`
    finds there, is the pull request's program."""
    root = os.path.realpath(project) if project is not None else None
    kept = []
    for entry in os.environ.get("PATH", os.defpath).split(os.pathsep):
        if not os.path.isabs(entry):
            continue
        real = os.path.realpath(entry)
        if root is not None and (real == root or real.startswith(root.rstrip(os.sep) + os.sep)):
            continue
        kept.append(entry)
    return os.pathsep.join(kept)


@dataclass(frozen=True)
class Ran:
    code: int | None  # None: killed when its time ran out
    output: str  # the tail of stdout and stderr


class NpmChild:
    """npm started (in a session of its own) and not yet waited for."""

    def __init__(self, argv: Sequence[str], cwd: Path, env: dict[str, str]) -> None:
        self._tail = bytearray()
        self._proc: subprocess.Popen[bytes] | None = None
        self._reader: threading.Thread | None = None
        children.started(self)
        try:
            # an interrupt inside Popen, after its fork, would leave a child no handle
            # names: held until the handle is kept
            with held():
                self._proc = subprocess.Popen(
                    list(argv),
                    cwd=cwd,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            self._reader = threading.Thread(target=self._read, daemon=True)
            self._reader.start()
        except BaseException:
            self.cancel()
            raise

    def _read(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        with contextlib.suppress(OSError, ValueError):
            for chunk in iter(lambda: os.read(fd, 65536), b""):
                self._tail += chunk
                if len(self._tail) > 2 * MAX_OUTPUT:
                    del self._tail[:-MAX_OUTPUT]

    def wait(self, seconds: float) -> Ran:
        """Wait at most ``seconds``; then the group is killed (``code`` None)."""
        assert self._proc is not None
        try:
            code: int | None = self._proc.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            code = None
        finally:
            self.cancel()
        text = bytes(self._tail[-MAX_OUTPUT:]).decode("utf-8", "replace")
        return Ran(code, text)

    def cancel(self) -> None:
        """Kill the whole group and reap npm (idempotent)."""
        proc = self._proc
        if proc is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
                os.killpg(proc.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired, OSError):
                proc.wait(timeout=5)
        if self._reader is not None and self._reader is not threading.current_thread():
            # a grandchild that left the group may hold the pipe open: not waited for long
            self._reader.join(timeout=2)
        if proc is not None and proc.stdout is not None and not self._reading:
            with contextlib.suppress(OSError):
                proc.stdout.close()
        children.finished(self)

    @property
    def _reading(self) -> bool:
        return self._reader is not None and self._reader.is_alive()


def run(argv: Sequence[str], cwd: Path, env: dict[str, str], seconds: float) -> Ran:
    return NpmChild(argv, cwd, env).wait(seconds)
