"""What the tests of agentguard's compiled tables share: a run whose bytecode (and so its
tables) is kept under a prefix of the test's own, and a table file as agentguard writes one."""

from __future__ import annotations

import marshal
import os
import subprocess
import sys
import zlib
from collections.abc import Callable
from pathlib import Path


def env(prefix: Path, *, write: bool = True) -> dict[str, str]:
    """The environment of a run that keeps its bytecode under ``prefix`` (``write``: and
    may write it, whatever this machine's PYTHONDONTWRITEBYTECODE)."""
    out = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    out["PYTHONPYCACHEPREFIX"] = str(prefix)
    if not write:
        out["PYTHONDONTWRITEBYTECODE"] = "1"
    return out


def table_file(prefix: Path, name: str) -> Path:
    """The table ``name`` under ``prefix`` (one at most), or a path that does not exist."""
    found = list(prefix.rglob(f"{name}.*.bin"))
    assert len(found) <= 1, found
    return found[0] if found else prefix / "none"


def inspect(prefix: Path, folder: Path, *, write: bool = True) -> None:
    ran = subprocess.run(
        [sys.executable, "-m", "agentguard", "inspect", str(folder), "--no-cache"],
        env=env(prefix, write=write),
        capture_output=True,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr.decode(errors="replace")[-2000:]


def sealed(head: bytes, value: object) -> bytes:
    """A table file as agentguard writes one (its head, the checksum, the body) of ``value``:
    a dict's values each marshalled on their own, as a table keeps them."""
    if isinstance(value, dict):
        value = {k: marshal.dumps(v) for k, v in value.items()}
    body = marshal.dumps(value)
    return head + zlib.crc32(body).to_bytes(4, "little") + body


def written(tmp_path: Path, name: str) -> tuple[Path, Path, Path]:
    """(bytecode prefix, an empty folder, the table ``name``) after one `inspect` of that
    folder wrote the table under the prefix."""
    prefix, empty = tmp_path / "pyc", tmp_path / "empty"
    empty.mkdir()
    inspect(prefix, empty)
    return prefix, empty, table_file(prefix, name)


def plant_and_rerun(
    tmp_path: Path,
    table: Path,
    planted: bytes | None,
    count: Callable[[], tuple[int, int]],
    many: int,
) -> None:
    """Put ``planted`` where the table is (None: a link to a copy of the good table
    elsewhere), then: a run compiles everything as without a table (``count``: compiled,
    loaded), an `inspect` works and writes a good table again, never through the link."""
    good = table.read_bytes()
    target = tmp_path / "elsewhere.bin"
    if planted is None:
        target.write_bytes(good)
        table.unlink()
        table.symlink_to(target)
    else:
        table.write_bytes(planted)
    compiled, loaded = count()
    assert loaded == 0 and compiled > many  # (everything compiled as without a table)
    inspect(tmp_path / "pyc", tmp_path / "empty")
    if planted is None:
        assert target.read_bytes() == good  # (never written through the link)
    else:
        compiled, loaded = count()
        assert compiled == 0 and loaded > many


def systemerror_bytes(raw: bytes) -> bytes:
    """``raw`` changed in one byte so that marshal raises SystemError: a code object whose
    fields are of the wrong types once its references shift (the interpreter's own check of
    a code object raises ``bad argument to internal function``). The first such change."""
    for at in range(len(raw)):
        for byte in range(256):
            bad = raw[:at] + bytes([byte]) + raw[at + 1 :]
            try:
                marshal.loads(bad)
            except SystemError:
                return bad
            except Exception:  # (any other failure: try the next change)
                continue
    raise AssertionError("no one-byte change makes marshal raise SystemError")
