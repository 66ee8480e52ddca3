"""The Docker engine failing for real: not there, refusing, denying, dying mid-stream.

* unreachable: DOCKER_HOST names a socket that does not exist;
* refusing: a unix socket server that accepts and closes, or answers 403 / 500 / garbage;
* permission denied: `agentguard` run as an unprivileged user against a 0600 socket (root
  would pass any mode, so the process drops to uid 65534 instead);
* dying mid-stream: a private dockerd (scripts/start-dockerd in a temporary folder, never
  the shared engine) is killed with SIGKILL while `agentguard inspect IMAGE` reads the
  image's `docker save` stream.

Each is exit 3 with a failed engine source: stable code, `retryable`, a remedy.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.hostile.promises import ROOT, check_failed_source, run_agentguard
from tests.hostile.unprivileged import stage
from tests.report_schema import validate_json_text

MiB = 1 << 20


def engine_failures(report: dict[str, Any]) -> list[dict[str, Any]]:
    out = [s for s in report["sources"] if s["status"] == "failed"]
    for s in out:
        check_failed_source(s)
    return out


def inspect_image(ref: str, host: str, cwd: Path, **kw: Any) -> tuple[int, dict[str, Any]]:
    run = run_agentguard(
        "inspect", ref, "--kind", "image", "--format", "json", "--no-lock",
        cwd=cwd, env={"DOCKER_HOST": host}, **kw,
    )  # fmt: skip
    run.check_no_crash()
    assert run.seconds < 120
    return run.code, json.loads(run.stdout)


def test_engine_unreachable(tmp_path: Path) -> None:
    host = f"unix://{tmp_path}/no-such-engine.sock"
    code, report = inspect_image("agent:1", host, tmp_path)
    assert code == 3
    [source] = engine_failures(report)
    assert {k: source[k] for k in ("kind", "name", "error_code", "retryable", "remedy")} == {
        "kind": "engine",
        "name": host,
        "error_code": "engine-unreachable",
        "retryable": True,
        "remedy": "start the Docker engine or point DOCKER_HOST at it, then retry",
    }
    assert report["findings"] == []


class RefusingEngine:
    """A unix socket that speaks just enough HTTP to refuse (or not even that)."""

    def __init__(self, path: Path, how: str) -> None:
        self.path, self.how = path, how
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(str(path))
        self.sock.listen(16)
        self.stop = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                if self.how == "close":
                    continue
                with contextlib.suppress(OSError):
                    conn.recv(65536)
                    if self.how == "garbage":
                        conn.sendall(b"\x00\xffnot http at all\r\n\r\n")
                        continue
                    status = {"403": "403 Forbidden", "500": "500 Internal Server Error"}[self.how]
                    body = json.dumps({"message": f"refused: {self.how}"}).encode()
                    conn.sendall(
                        f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\n"
                        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
                        + body
                    )

    def close(self) -> None:
        self.stop.set()
        self.sock.close()


@pytest.mark.parametrize(
    ("how", "code", "retryable"),
    [
        ("close", "engine-unreachable", True),
        ("garbage", "engine-unreachable", True),
        ("403", "engine-permission-denied", False),
        ("500", "engine-error", True),
    ],
)
def test_engine_refusing(tmp_path: Path, how: str, code: str, retryable: bool) -> None:
    engine = RefusingEngine(tmp_path / "engine.sock", how)
    try:
        exit_code, report = inspect_image("agent:1", f"unix://{engine.path}", tmp_path)
    finally:
        engine.close()
    assert exit_code == 3
    [source] = engine_failures(report)
    assert (source["kind"], source["error_code"], source["retryable"]) == (
        "engine",
        code,
        retryable,
    )
    assert source["reason"].startswith("cannot reach the Docker engine: ")


def test_permission_denied_on_the_socket(tmp_path: Path) -> None:
    folder = Path(tempfile.mkdtemp(prefix="agd-perm-", dir="/tmp"))
    try:
        folder.chmod(0o755)
        engine = RefusingEngine(folder / "engine.sock", "500")
        (folder / "engine.sock").chmod(0o600)  # root's: uid 65534 may not connect
        try:
            run = _run_as_nobody(folder, f"unix://{engine.path}")
        finally:
            engine.close()
    finally:
        subprocess.run(["rm", "-rf", str(folder)], check=False)
    validate_json_text(run.stdout)
    run_report = json.loads(run.stdout)
    assert run.returncode == 3, run.stderr
    assert "Traceback" not in run.stderr
    [source] = engine_failures(run_report)
    assert (source["kind"], source["error_code"], source["retryable"], source["remedy"]) == (
        "engine",
        "engine-permission-denied",
        False,
        "run as a user allowed to use the engine's socket",
    )
    assert source["reason"].startswith(  # in words, not the HTTP library's
        "cannot reach the Docker engine: no permission to use the engine socket at unix://"
    )


def _run_as_nobody(cwd: Path, host: str) -> subprocess.CompletedProcess[str]:
    # the clone may sit in a folder uid 65534 cannot read (mktemp -d, a home directory):
    # run from a world-readable copy of what the run needs
    python, pythonpath = stage(cwd / "runtime")
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(cwd),
        "DOCKER_HOST": host,
        "PYTHONPATH": pythonpath,
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    args = ["inspect", "agent:1", "--kind", "image", "--format", "json", "--no-lock"]
    return subprocess.run(
        [
            "setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            python,
            "-s",
            "-m",
            "agentguard",
            *args,
        ],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


# -- a private engine killed mid-stream -------------------------------------------------


@contextlib.contextmanager
def private_engine() -> Iterator[tuple[str, Path]]:
    """A dockerd of our own (short socket path); killed and removed at the end, with the
    containerd it started."""
    state = Path(tempfile.mkdtemp(prefix="agd-die-", dir="/tmp"))
    children: list[int] = []
    try:
        out = subprocess.run(
            [str(ROOT / "scripts" / "start-dockerd"), str(state)],
            capture_output=True, text=True, check=True, timeout=120,
        )  # fmt: skip
        host = out.stdout.strip().split("=", 1)[1]
        yield host, state
    finally:
        pid_file = state / "dockerd.pid"
        if pid_file.exists():
            pid = int(pid_file.read_text())
            children = _children(pid)
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for child in children + _orphans(state):
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGKILL)
        time.sleep(0.5)
        subprocess.run(f"umount -R {state}/exec {state}/data 2>/dev/null", shell=True, check=False)
        subprocess.run(["rm", "-rf", str(state)], check=False)


def _children(pid: int) -> list[int]:
    proc = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True, check=False)
    return [int(x) for x in proc.stdout.split()]


def _orphans(state: Path) -> list[int]:
    """containerd (or shims) started for this engine, found by the state folder they name."""
    proc = subprocess.run(["pgrep", "-f", str(state)], capture_output=True, text=True, check=False)
    return [int(x) for x in proc.stdout.split() if int(x) != os.getpid()]


def _wchar(pid: int) -> int:
    for line in Path(f"/proc/{pid}/io").read_text().splitlines():
        if line.startswith("wchar"):
            return int(line.split()[1])
    raise AssertionError("no wchar")


@pytest.mark.engine
def test_engine_dying_while_the_image_streams() -> None:
    layer = 512 * MiB
    with private_engine() as (host, state):
        rootfs = state / "rootfs.tar"
        with tarfile.open(rootfs, "w") as tf:
            info = tarfile.TarInfo("app")
            info.type, info.mode = tarfile.DIRTYPE, 0o755
            tf.addfile(info)
            chunk = bytes(128 * MiB)
            for i in range(layer // len(chunk)):
                info = tarfile.TarInfo(f"data/blob{i}.bin")
                info.size = len(chunk)
                tf.addfile(info, io.BytesIO(chunk))
        env = dict(os.environ, DOCKER_HOST=host)
        subprocess.run(
            ["docker", "import", "-c", "WORKDIR /app", str(rootfs), "agtest-big:1"],
            env=env, check=True, capture_output=True, timeout=300,
        )  # fmt: skip
        rootfs.unlink()
        dockerd = int((state / "dockerd.pid").read_text())
        proc = subprocess.Popen(
            [sys.executable, "-m", "agentguard", "inspect", "agtest-big:1",
             "--kind", "image", "--format", "json", "--no-lock"],
            env=dict(env, PYTHONPATH=str(ROOT)), cwd=state,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        # This engine (20.10) exports the image to a temporary folder, then streams it: it
        # has written about twice the layer once the stream is well under way.
        base = _wchar(dockerd)
        deadline = time.monotonic() + 120
        while _wchar(dockerd) - base < layer + layer // 4:
            assert proc.poll() is None, "the stream ended before the engine could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.005)
        os.kill(dockerd, signal.SIGKILL)
        out, err = proc.communicate(timeout=120)
    assert "Traceback" not in err and "internal error" not in err, err
    assert proc.returncode == 3
    validate_json_text(out)
    report = json.loads(out)
    failures = engine_failures(report)
    [engine] = [s for s in failures if s["kind"] == "engine"]
    assert (engine["name"], engine["error_code"], engine["retryable"], engine["remedy"]) == (
        "agtest-big:1",
        "engine-stream-interrupted",
        True,
        "retry; the image was only partly read",
    )
    assert engine["reason"].startswith("the engine's image stream broke after ")
    assert report["findings"] == [] and report["complete"] is False
