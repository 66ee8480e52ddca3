"""`agentguard lock` when writing fails or the process dies: the previous lock files stay
byte for byte, nothing partial is left behind, and two runs never interleave.

Real faults only: a 256 KiB tmpfs filled to the last block (disk full), a read-only bind
mount of the project (read-only folder), real signals to a real `agentguard lock` at
random moments, and two real runs started together. The tests run as root here and in
CI; when the kernel refuses a mount they fail (never skip) and say so.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentguard import lock_command
from agentguard.findings import SourceStatus
from agentguard.lock.lockfile import PYLOCK, REQUIREMENTS_LOCK, project_lock
from agentguard.lock.stored import read_stored
from agentguard.lock.switch import finish_pending, pending
from tests.hostile import profiles
from tests.hostile.promises import ROOT, check_failed_source, run_agentguard
from tests.lock.helpers import write_project

pytestmark = pytest.mark.usefixtures("isolated_cache")

LOCKS = (PYLOCK, REQUIREMENTS_LOCK)
INPUTS_A = ["claude-agent-sdk==0.2.100"]
INPUTS_B = ["claude-agent-sdk==0.2.100", "mcp>=1.5,<2"]  # same pins, new input hash


def files(project: Path) -> dict[str, bytes]:
    return {name: (project / name).read_bytes() for name in LOCKS if (project / name).exists()}


def litter(project: Path) -> list[str]:
    return sorted(p.name for p in project.iterdir() if p.name.endswith(".tmp"))


def lock(project: Path, index: dict[str, Any], *extra: str) -> tuple[int, dict[str, Any]]:
    run = run_agentguard(
        "lock", str(project), "--index-url", index["url"], "--format", "json", *extra
    )
    run.check_no_crash()
    return run.code, json.loads(run.stdout)


def input_hash(project: Path) -> str:
    return str(lock_command.read_inputs(project).input_hash)


@pytest.fixture()
def locked(tmp_path: Path, agent_index: dict[str, Any]) -> Path:
    project = write_project(tmp_path / "bot", INPUTS_A)
    code, report = lock(project, agent_index)
    assert code in (0, 1) and report["complete"], report["sources"]
    write_project(project, INPUTS_B)  # the next run resolves again and rewrites both files
    return project


def assert_write_failed(report: dict[str, Any], project: Path) -> dict[str, Any]:
    [source] = [s for s in report["sources"] if s["status"] == "failed"]
    check_failed_source(source)
    assert (source["kind"], source["error_code"], source["retryable"]) == (
        "lockfile",
        "lockfile-write-failed",
        False,
    )
    assert report["notes"] == ["Writing failed; the previous lock files are unchanged."]
    return source


@contextlib.contextmanager
def mounted(args: list[str], where: Path) -> Iterator[None]:
    proc = subprocess.run(["mount", *args, str(where)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, (
        f"`mount {' '.join(args)}` failed ({proc.stderr.strip()}): these fault tests need root "
        "with CAP_SYS_ADMIN (as in CI)"
    )
    try:
        yield
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def test_disk_full_leaves_the_previous_lock_intact(
    tmp_path: Path, locked: Path, agent_index: dict[str, Any]
) -> None:
    disk = tmp_path / "disk"
    disk.mkdir()
    with mounted(["-t", "tmpfs", "-o", "size=256k", "tmpfs"], disk):
        project = disk / "bot"
        shutil.copytree(locked, project)
        before = files(project)
        fd = os.open(disk / "filler", os.O_WRONLY | os.O_CREAT)
        try:  # fill the disk to its last block
            while True:
                os.write(fd, b"\0" * 4096)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
        finally:
            os.close(fd)
        code, report = lock(project, agent_index)
        assert code == 3
        source = assert_write_failed(report, project)
        assert "No space left on device" in source["reason"]
        assert files(project) == before  # byte for byte
        assert litter(project) == []


def test_read_only_folder_leaves_the_previous_lock_intact(
    locked: Path, agent_index: dict[str, Any]
) -> None:
    before = files(locked)
    with mounted(["--bind", "-o", "ro", str(locked)], locked):
        ro = subprocess.run(["mount", "-o", "remount,ro,bind", str(locked)], check=False)
        assert ro.returncode == 0
        with pytest.raises(OSError) as caught:
            (locked / "probe").write_text("x")
        assert caught.value.errno == errno.EROFS
        code, report = lock(locked, agent_index)
        assert code == 3
        source = assert_write_failed(report, locked)
        assert "Read-only file system" in source["reason"]
        assert files(locked) == before
        assert litter(locked) == []


# -- killed at random moments ------------------------------------------------------------


def start_lock(project: Path, index: dict[str, Any]) -> subprocess.Popen[bytes]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agentguard",
            "lock",
            str(project),
            "--index-url",
            index["url"],
            "-q",
        ],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def whole_lock_for(project: Path, wanted_hash: str) -> bool:
    """Both files are a complete lock made from ``wanted_hash`` inputs."""
    stored = read_stored(project)
    return stored is not None and stored.input_hash == wanted_hash == stored.requirements_input_hash


def test_killed_at_random_moments_the_lock_is_old_or_new_never_partial(
    locked: Path, agent_index: dict[str, Any]
) -> None:
    project = locked
    rounds = 15 if profiles.active() == "ci" else 60
    rng = random.Random(20261130)
    start = time.monotonic()
    code, _ = lock(project, agent_index)  # time one whole run (inputs B)
    full = time.monotonic() - start
    assert code in (0, 1)
    hashes = {"A": "", "B": input_hash(project)}
    write_project(project, INPUTS_A)
    hashes["A"] = input_hash(project)
    outcomes: dict[str, int] = {"old kept": 0, "new written": 0, "switched, renames left": 0}
    signals = [signal.SIGINT, signal.SIGTERM, signal.SIGKILL]
    target = "A"
    for i in range(rounds):
        finish_pending(project)  # what the next run does first (so `before` is what it sees)
        before = files(project)
        sig = signals[i % 3]
        proc = start_lock(project, agent_index)
        time.sleep(rng.uniform(0.05, full * 1.1))
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(sig)
        try:
            _, err = proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:  # stopped here, never left to the next tests
            proc.kill()
            _, err = proc.communicate()
            pytest.fail(f"round {i}: the lock did not end within 120 s of {sig.name}: {err!r}")
        assert b"Traceback" not in err, err
        now = files(project)
        per_file = {}
        for name in LOCKS:
            if now[name] == before[name]:
                per_file[name] = "old"
            else:
                per_file[name] = "new"
        if pending(project):
            # killed after the switch, before both renames: the next run finishes them
            outcomes["switched, renames left"] += 1
        elif set(per_file.values()) == {"old"}:
            outcomes["old kept"] += 1
        else:
            assert set(per_file.values()) == {"new"}, f"round {i}: a mixed pair, no switch"
            assert whole_lock_for(project, hashes[target]), f"round {i}: partial lock"
            outcomes["new written"] += 1
        for name in LOCKS:  # every file is a whole file, whatever the pair
            assert now[name].endswith(b"\n") and len(now[name]) > 100, (i, name)
        if sig is not signal.SIGKILL:  # its cleanups ran (a SIGKILLed run's may remain
            # until a later run gets as far as holding the project lock)
            assert [n for n in litter(project) if f"-{proc.pid}.tmp" in n] == [], (i, sig)
        target = "B" if target == "A" else "A"
        write_project(project, INPUTS_A if target == "A" else INPUTS_B)
    # Whatever was left, the next run locks cleanly, removes stale temp files, and agrees.
    code, report = lock(project, agent_index)
    assert code in (0, 1) and report["complete"], report["sources"]
    assert litter(project) == []
    assert whole_lock_for(project, hashes[target])
    code, check = lock(project, agent_index, "--check")
    assert [f["rule_id"] for f in check["findings"] if f["rule_id"] == "AG104"] == []
    assert sum(outcomes.values()) == rounds
    print(f"kill outcomes over {rounds} rounds: {outcomes}")


# -- two runs at once ----------------------------------------------------------------------


def test_two_runs_at_once_are_serialised(locked: Path, agent_index: dict[str, Any]) -> None:
    project = locked
    wanted = input_hash(project)
    procs = [start_lock(project, agent_index) for _ in range(2)]
    codes = [p.wait(timeout=120) for p in procs]
    assert codes in ([0, 0], [1, 1], [0, 1], [1, 0]), codes
    assert whole_lock_for(project, wanted)
    assert litter(project) == []


def test_a_run_waits_while_another_holds_the_project(
    locked: Path, agent_index: dict[str, Any]
) -> None:
    project = locked
    before = files(project)
    fd = os.open(project, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # as another `agentguard lock` would
        proc = start_lock(project, agent_index)
        time.sleep(3)
        assert proc.poll() is None  # still waiting its turn
        assert files(project) == before
    finally:
        os.close(fd)  # releases the lock
    assert proc.wait(timeout=120) in (0, 1)
    assert files(project) != before
    assert whole_lock_for(project, input_hash(project))


def test_a_run_that_cannot_get_the_project_refuses(
    locked: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """(In process, with the wait shortened from 60 s to 0.5 s.)"""
    before = files(locked)
    monkeypatch.setattr(lock_command, "project_lock", functools.partial(project_lock, wait=0.5))
    fd = os.open(locked, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        report, _ = lock_command.run_lock(lock_command.LockOptions(project=locked))
    finally:
        os.close(fd)
    [source] = [s for s in report.sources if s.status is SourceStatus.FAILED]
    check_failed_source(source)
    assert (source.kind, source.error_code, source.retryable, source.reason) == (
        "lockfile",
        "lock-busy",
        True,
        "another `agentguard lock` holds this project for more than 0 s",
    )
    assert source.remedy == (
        "Wait for the other `agentguard lock` on this project to finish, then re-run."
    )
    assert report.notes == ("No lock file was written or changed.",)
    assert files(locked) == before


def test_interrupted_between_the_two_temp_files_named_fake(
    locked: Path, agent_index: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fake, because the window is microseconds wide: Ctrl-C lands while the second temp
    file is being synced. Both originals stay, both temp files go."""
    from agentguard.lock import switch

    before = files(locked)
    calls = {"fsync": 0}
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        calls["fsync"] += 1
        if calls["fsync"] == 2:
            raise KeyboardInterrupt
        real_fsync(fd)

    monkeypatch.setattr(switch.os, "fsync", fsync)
    with pytest.raises(KeyboardInterrupt):
        lock_command.run_lock(
            lock_command.LockOptions(project=locked, index_url=agent_index["url"])
        )
    assert calls["fsync"] == 2
    assert files(locked) == before
    assert litter(locked) == []


def test_temp_files_a_killed_run_left_are_removed_by_the_next_run(
    locked: Path, agent_index: dict[str, Any]
) -> None:
    """SIGKILL skips every cleanup: what it leaves (named as a killed run names it) is gone
    after the next run, which holds the project lock while it removes it."""
    for name in LOCKS:
        (locked / f".{name}.agentguard-999999.tmp").write_text("half a lock")
    code, report = lock(locked, agent_index)
    assert code in (0, 1) and report["complete"]
    assert litter(locked) == []
    assert whole_lock_for(locked, input_hash(locked))


def test_interrupted_right_after_the_switch_named_fake(
    locked: Path, agent_index: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fake, because the window is one bytecode wide: Ctrl-C lands the moment the
    manifest is renamed into place, before either lock file is. The switch has happened, so
    the new pair is finished, not thrown away: both files new, no manifest, no temp file."""
    from agentguard.lock import switch

    before = files(locked)
    real_replace = os.replace

    def replace(src: Any, dst: Any) -> None:
        real_replace(src, dst)
        if Path(dst).name == switch.SWITCH:
            raise KeyboardInterrupt  # as if it arrived the moment the rename returned

    monkeypatch.setattr(switch.os, "replace", replace)
    with pytest.raises(KeyboardInterrupt):
        lock_command.run_lock(
            lock_command.LockOptions(project=locked, index_url=agent_index["url"])
        )
    now = files(locked)
    assert all(now[name] != before[name] for name in LOCKS)
    assert whole_lock_for(locked, input_hash(locked))
    assert not switch.pending(locked)
    assert litter(locked) == []
