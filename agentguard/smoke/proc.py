"""Running the smoke run's children: the minimal environment they get, and one bounded run.

Every child (the installer, the probe in the scratch interpreter, a stdio MCP server) gets
``PATH``, a ``HOME`` and ``TMPDIR`` inside the run's temporary folder, the locale, and the
paths of the machine's CA certificates (file names, no secret); nothing else of the
caller's environment (no tokens, no proxy settings, no index credentials). Each runs in a
session of its own, and the whole process group is killed when its deadline passes or its
run ends, so a package that forks a daemon into its group does not outlive the run (one
that leaves the group with ``setsid`` can: docs/smoke.md, "not promised").
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import IO

PASSED = ("LANG", "LC_ALL", "LC_CTYPE", "SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS")
MAX_OUTPUT = 64 * 1024  # bytes kept of a child's output (its tail)


def child_env(scratch: str, extra: dict[str, str] | None = None) -> dict[str, str]:
    home = os.path.join(scratch, "home")
    tmp = os.path.join(scratch, "tmp")
    os.makedirs(home, exist_ok=True)
    os.makedirs(tmp, exist_ok=True)
    env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": home, "TMPDIR": tmp}
    env.update({k: os.environ[k] for k in PASSED if k in os.environ})
    env.setdefault("LANG", "C.UTF-8")
    env.update(extra or {})
    return env


@dataclass(frozen=True)
class Ran:
    code: int | None  # None: killed at its deadline
    output: str  # stdout and stderr, the tail
    seconds: float

    @property
    def timed_out(self) -> bool:
        return self.code is None


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)


# The children running now (their process groups), so that an interrupted run (Ctrl-C,
# SIGTERM, check's own deadline) ends them at once, where its threads would otherwise wait
# for each one's deadline before the command could end; once stopped, a child that is
# started anyway (a server still queued for a thread) is ended as it starts.
_running: set[int] = set()
_guard = threading.Lock()
_stopped = threading.Event()


def spawn(
    argv: Sequence[str], *, cwd: str, env: dict[str, str], stdin: int
) -> subprocess.Popen[bytes]:
    """``argv`` started in a session of its own (its group is what :func:`kill_group` and an
    interrupt end), its output piped (stderr beside stdout when ``stdin`` is DEVNULL, else
    on its own pipe), and counted among the children running now."""
    proc = subprocess.Popen(
        list(argv),
        cwd=cwd,
        env=env,
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if stdin == subprocess.DEVNULL else subprocess.PIPE,
        start_new_session=True,
    )
    started(proc)
    return proc


def started(proc: subprocess.Popen[bytes]) -> None:
    with _guard:
        _running.add(proc.pid)
    if _stopped.is_set():
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)


def ended(proc: subprocess.Popen[bytes]) -> None:
    with _guard:
        _running.discard(proc.pid)


@contextlib.contextmanager
def ended_on_interrupt() -> Iterator[None]:
    """Every child this block started is killed when the block is left by an exception."""
    _stopped.clear()
    try:
        yield
    except BaseException:
        _stopped.set()
        with _guard:
            groups = list(_running)
        for pgid in groups:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, signal.SIGKILL)
        raise


class Tail(threading.Thread):
    """A child's output, read to its end as it comes; only its last :data:`MAX_OUTPUT`
    bytes kept (a child that writes without end fills neither the disk nor agentguard's
    memory, and the run never waits on the pipe: a child that left the process group may
    hold it open past every deadline)."""

    def __init__(self, stream: IO[bytes]) -> None:
        super().__init__(daemon=True)
        self.stream = stream
        self.kept = bytearray()
        self.guard = threading.Lock()

    def run(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            while chunk := os.read(self.stream.fileno(), 65536):
                with self.guard:
                    self.kept += chunk
                    del self.kept[:-MAX_OUTPUT]

    def text(self) -> str:
        with self.guard:
            return bytes(self.kept).decode("utf-8", "replace")


def run(argv: Sequence[str], *, cwd: str, env: dict[str, str], timeout: float) -> Ran:
    """Run ``argv`` to its end or its deadline; stdin is closed, the output's tail kept.
    What it left running in its group is killed as it ends."""
    began = time.monotonic()
    proc = spawn(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL)
    assert proc.stdout is not None
    out = Tail(proc.stdout)
    out.start()
    code: int | None = None
    try:
        code = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        code = None
    finally:
        kill_group(proc)  # at its deadline, or what it left running in its group
        ended(proc)
    out.join(1.0)  # (the rest of what it wrote; a child that left the group: not waited on)
    return Ran(code, out.text(), time.monotonic() - began)


def tail(text: str, lines: int = 12) -> tuple[str, ...]:
    """The last non-empty lines of a child's output, redacted (it may print what it read)."""
    from agentguard import redact

    kept = [line.rstrip() for line in text.splitlines() if line.strip()][-lines:]
    return tuple(redact.text(line)[:300] for line in kept)
