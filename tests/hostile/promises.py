"""The promises every hostile-input test checks, in one place.

1. A failure is a failed source: stable kebab-case ``error_code``, a one-line reason,
   ``retryable`` said (True/False), and a remedy.
2. Nothing is written anywhere but where it should be (a watched folder stays as it was).
3. Time and memory stay bounded.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

from agentguard.findings import Source, SourceStatus
from tests.report_schema import check_cli_output

CODE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
ROOT = Path(__file__).resolve().parents[2]


def check_failed_source(source: Source | Mapping[str, Any]) -> None:
    """One failed source keeps the promise (a Source or its JSON form)."""
    if isinstance(source, Source):
        data: Mapping[str, Any] = source.to_json()
    else:
        data = source
    assert data["status"] == "failed", data
    code, reason = data.get("error_code"), data.get("reason")
    assert isinstance(code, str) and CODE.match(code), f"unstable error code: {data}"
    assert isinstance(reason, str) and reason.strip(), f"no reason: {data}"
    assert "\n" not in reason and "\r" not in reason, f"reason is not one line: {data}"
    assert "Traceback" not in reason, data
    assert isinstance(data.get("retryable"), bool), f"retryable not said: {data}"
    remedy = data.get("remedy")
    assert isinstance(remedy, str) and remedy.strip(), f"no remedy: {data}"


def failed(sources: Iterable[Source]) -> list[Source]:
    """The failed sources, each checked against the promise."""
    out = [s for s in sources if s.status is SourceStatus.FAILED]
    for s in out:
        check_failed_source(s)
    return out


def snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    """Every path below ``folder`` with its size and mtime (to prove nothing was written)."""
    out: dict[str, tuple[int, int]] = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in [*dirnames, *filenames]:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            out[os.path.relpath(path, folder)] = (st.st_size, st.st_mtime_ns)
    return out


class Overrun(Exception):
    """A call took longer than its bound (raised from a timer signal)."""


@contextlib.contextmanager
def within(seconds: float) -> Iterator[None]:
    """Fail the test (instead of hanging it) when the block runs longer than ``seconds``."""

    def fire(_sig: int, _frame: FrameType | None) -> None:
        raise Overrun(f"still running after {seconds} s")

    old = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


@dataclass(frozen=True)
class Run:
    """One real `agentguard` process: exit code, output, time and peak memory."""

    code: int
    stdout: str
    stderr: str
    seconds: float
    max_rss_mib: float

    def check_no_crash(self) -> None:
        assert "Traceback" not in self.stderr, self.stderr
        assert "internal error" not in self.stderr, self.stderr


def run_agentguard(
    *args: str,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 300,
) -> Run:
    """Run the real CLI in a child process and measure it (its own peak RSS, see _LAUNCHER)."""
    full_env = dict(os.environ)
    full_env.pop("AGENTGUARD_DEBUG", None)
    full_env["PYTHONPATH"] = str(ROOT)
    full_env.update(env or {})
    fd, peak_file = tempfile.mkstemp(prefix="agentguard-peak-")
    os.close(fd)
    start = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-c", _LAUNCHER, peak_file, sys.executable, "-m", "agentguard", *args],
        cwd=cwd,
        env=full_env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # a timeout kills the launcher and agentguard together
    )
    chunks: dict[str, list[bytes]] = {"out": [], "err": []}
    readers = [
        threading.Thread(target=_drain, args=(proc.stdout, chunks["out"]), daemon=True),
        threading.Thread(target=_drain, args=(proc.stderr, chunks["err"]), daemon=True),
    ]
    for t in readers:
        t.start()
    timer = threading.Timer(timeout, _kill_group, (proc.pid,))
    timer.start()
    try:
        _, status, _usage = os.wait4(proc.pid, 0)
    finally:
        timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)
    try:
        peak_kib = int(Path(peak_file).read_text() or 0)
    finally:
        os.unlink(peak_file)
    for t in readers:
        t.join()
    seconds = time.monotonic() - start
    err = b"".join(chunks["err"]).decode("utf-8", "replace")
    if seconds >= timeout:
        raise AssertionError(f"agentguard {' '.join(args)} ran over {timeout} s: {err}")
    out = b"".join(chunks["out"]).decode("utf-8")
    check_cli_output(args, out, cwd)
    return Run(proc.returncode, out, err, seconds, peak_kib / 1024)


# The peak memory of agentguard alone. Linux counts the peak of the memory a process had
# before exec (the parent's: the whole test run's) in a child's ru_maxrss; a small launcher
# in between keeps that to its own few MB. It passes agentguard's exit (or signal) on.
_LAUNCHER = """
import os, signal, subprocess, sys
proc = subprocess.Popen(sys.argv[2:])
_, status, usage = os.wait4(proc.pid, 0)
with open(sys.argv[1], "w") as fh:
    fh.write(str(usage.ru_maxrss))
code = os.waitstatus_to_exitcode(status)
if code < 0:
    signal.signal(-code, signal.SIG_DFL)
    os.kill(os.getpid(), -code)
sys.exit(code)
"""


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _drain(stream: Any, into: list[bytes]) -> None:
    for chunk in iter(lambda: stream.read1(1 << 16), b""):
        into.append(chunk)
    stream.close()


def only(items: Sequence[Any]) -> Any:
    assert len(items) == 1, items
    return items[0]
