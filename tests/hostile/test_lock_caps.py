"""Every lock file is read through the safe open with the one lock cap
(:data:`agentguard.safeio.MAX_LOCK_BYTES`): the foreign locks (uv.lock, poetry.lock, a
pylock.toml), the version committed at git HEAD, and the switch of a lock pair."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

import pytest

from agentguard import safeio
from agentguard.lock import switch
from agentguard.lock.committed import committed_text
from agentguard.lock.mutex import LockfileError
from agentguard.lock.readers import READERS, LockReadError, read_lock_text


@pytest.mark.parametrize("reader", READERS, ids=lambda r: r.filename)
def test_a_foreign_lock_one_byte_over_the_lock_cap_is_refused(
    tmp_path: Path, reader: object
) -> None:
    path = tmp_path / reader.filename  # type: ignore[attr-defined]
    with path.open("wb") as fh:
        fh.write(b"version = 1\n")
        fh.truncate(safeio.MAX_LOCK_BYTES + 1)  # sparse: the size is what is checked first
    with pytest.raises(LockReadError) as caught:
        read_lock_text(path, path.name)
    assert caught.value.code == "lockfile-too-large"
    assert str(safeio.MAX_LOCK_BYTES) in str(caught.value)


def test_a_foreign_lock_at_the_cap_is_read(tmp_path: Path) -> None:
    path = tmp_path / "uv.lock"
    path.write_bytes(b"#" * safeio.MAX_LOCK_BYTES)
    assert len(read_lock_text(path, path.name)) == safeio.MAX_LOCK_BYTES


def _git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-C", str(root), *args],
        check=True,
        capture_output=True,
    )


def test_a_committed_lock_over_the_lock_cap_is_not_read(tmp_path: Path) -> None:
    _git(tmp_path, "init", "-q")
    (tmp_path / "poetry.lock").write_bytes(b"#" * (safeio.MAX_LOCK_BYTES + 1))
    (tmp_path / "uv.lock").write_text("version = 1\n")
    _git(tmp_path, "add", "poetry.lock", "uv.lock")
    _git(tmp_path, "commit", "-qm", "locks")

    assert committed_text(tmp_path, "poetry.lock") == (
        None,
        f"the committed poetry.lock is larger than {safeio.MAX_LOCK_BYTES} bytes",
    )
    assert committed_text(tmp_path, "uv.lock") == ("version = 1\n", "")


def _left_switch(root: Path, manifest: bytes) -> None:
    (root / switch.SWITCH).write_bytes(manifest)


def test_a_switch_a_killed_run_left_is_read_through_the_safe_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    new = b"# new requirements.lock\n"
    temp = switch.temp_for(tmp_path / "requirements.lock")
    temp.write_bytes(new)
    (tmp_path / "requirements.lock").write_bytes(b"# old\n")
    _left_switch(
        tmp_path,
        json.dumps(
            {
                "schema": 1,
                "files": {
                    "requirements.lock": {
                        "temp": temp.name,
                        "sha256": hashlib.sha256(new).hexdigest(),
                    }
                },
            }
        ).encode(),
    )
    read: list[tuple[str, int]] = []
    real = safeio.read_bytes

    def recording(path: str | os.PathLike[str], **kw: object) -> bytes:
        read.append((Path(path).name, int(kw["cap"])))  # type: ignore[call-overload]
        return real(path, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(safeio, "read_bytes", recording)
    switch.finish_pending(tmp_path)

    assert (tmp_path / "requirements.lock").read_bytes() == new
    assert not switch.pending(tmp_path)
    assert read == [
        (switch.SWITCH, safeio.MAX_SWITCH_BYTES),
        (temp.name, safeio.MAX_LOCK_BYTES),
    ]


@pytest.mark.parametrize("kind", ["fifo", "link", "oversize"])
def test_a_planted_switch_manifest_is_refused_not_followed_or_waited_on(
    tmp_path: Path, kind: str
) -> None:
    path = tmp_path / switch.SWITCH
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "link":
        (tmp_path / "elsewhere.json").write_text('{"schema": 1, "files": {}}')
        path.symlink_to(tmp_path / "elsewhere.json")
    else:
        path.write_bytes(b" " * safeio.MAX_SWITCH_BYTES + b'{"schema": 1}')
    with pytest.raises(LockfileError) as caught:
        switch.finish_pending(tmp_path)
    assert caught.value.code == "lock-switch-interrupted"
