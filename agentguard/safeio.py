"""The one way agentguard reads a target's files and writes its outputs.

Reading (:func:`read_bytes`, :func:`read_text`, :func:`open_regular`): the path, once
every link in it is resolved, must stay inside the target's root (a committed
``requirements.lock -> /proc/self/environ`` is never opened); the last component is
opened with ``O_NOFOLLOW`` (a link swapped in after the check is an error) and
``O_NONBLOCK`` (a FIFO never hangs the run); only regular files are read; every read is
capped. A refusal is an :class:`UnsafeRead` (an ``OSError``, so every existing "cannot
read" path turns it into a failed or skipped source) whose message is short and quotes
nothing from the file.

Writing (:func:`write_output`, :func:`write_in`): an output path that is a symbolic
link is refused (:class:`UnsafeWrite`, exit 2 at the command line); the bytes go to a
temporary file created with ``O_EXCL | O_NOFOLLOW`` beside the target (a planted link
under the temporary name is never followed), which then replaces the target in one
``rename``. :func:`write_in` also keeps the file inside an intended folder: no absolute
name, no ``..``, no link on the way down.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat as _stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

MAX_FILE_BYTES = 4 * 1024 * 1024  # a project file (code, settings, compose...)
MAX_CONFIG_BYTES = 4 * 1024 * 1024  # agentguard.toml, pyproject.toml read as config
# every lock file: ours, uv.lock, poetry.lock, a pylock.toml, one committed at git HEAD
MAX_LOCK_BYTES = 16 * 1024 * 1024  # (thousands of wheels)
MAX_SWITCH_BYTES = 4096  # the manifest of a lock pair's switch (lock/switch.py)

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
READ_FLAGS = os.O_RDONLY | _CLOEXEC | getattr(os, "O_NONBLOCK", 0)
FIRST_READ = 256 * 1024  # most source files end within the first read


class UnsafeRead(OSError):
    """A target file that is not read: a link out of the root, not a regular file."""

    def __init__(self, reason: str, code: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.code = code

    def __str__(self) -> str:
        return self.reason


class TooLarge(UnsafeRead):
    def __init__(self, size: int, cap: int = MAX_FILE_BYTES) -> None:
        super().__init__(f"{size} bytes, over the {cap} byte cap: not read", "file-too-large")
        self.size = size
        self.cap = cap


class NotRegular(UnsafeRead):
    """A FIFO, socket or device under a file's name: never opened for reading."""

    def __init__(self) -> None:
        super().__init__("not a regular file: not read", "file-not-regular")


class LinkOut(UnsafeRead):
    def __init__(self) -> None:
        super().__init__(
            "symbolic link pointing outside the project: not followed", "file-link-outside"
        )


class UnsafeWrite(OSError):
    """An output that would be written through a link or outside its folder."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason

    def __str__(self) -> str:
        return self.reason


# -- reading ---------------------------------------------------------------------------


def inside(path: str | os.PathLike[str], root: str | os.PathLike[str]) -> bool:
    """Whether ``path``, every link resolved, is ``root`` or below it (resolved too)."""
    real_root = os.path.realpath(root)
    target = os.path.realpath(path)
    return target == real_root or target.startswith(real_root.rstrip(os.sep) + os.sep)


def _root_of(path: str | os.PathLike[str], root: str | os.PathLike[str] | None) -> str:
    # A file named on its own (a --config, a compose file) is judged from its own folder.
    return os.fspath(root) if root is not None else os.path.dirname(os.path.abspath(path)) or "."


def _open(
    path: str | os.PathLike[str], root: str | os.PathLike[str] | None, listed: bool = False
) -> int:
    """A descriptor of a regular file. ``listed``: the project walk listed it and already
    refused links out of the project (no second ``realpath``)."""
    if listed:
        fd = os.open(path, READ_FLAGS)
    else:
        real = os.path.realpath(path)
        if not inside(real, _root_of(path, root)):
            raise LinkOut()
        try:
            fd = os.open(real, READ_FLAGS | _NOFOLLOW)
        except OSError as exc:
            if exc.errno == errno.ELOOP:  # swapped for a link after the check
                raise LinkOut() from None
            raise
    try:
        if not _stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegular()
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_bytes(
    path: str | os.PathLike[str],
    *,
    root: str | os.PathLike[str] | None = None,
    cap: int = MAX_FILE_BYTES,
) -> bytes:
    """The whole file, read safely (see the module docstring). ``root``: the target's root
    folder (default: the file's own folder). Raises OSError (:class:`UnsafeRead`...)."""
    fd = _open(path, root)
    try:
        return read_rest(fd, b"", cap)
    finally:
        os.close(fd)


def read_text(
    path: str | os.PathLike[str],
    *,
    root: str | os.PathLike[str] | None = None,
    cap: int = MAX_FILE_BYTES,
) -> str:
    """As :func:`read_bytes`, decoded as UTF-8 (raises UnicodeDecodeError)."""
    return read_bytes(path, root=root, cap=cap).decode("utf-8")


@contextlib.contextmanager
def open_regular(
    path: str | os.PathLike[str],
    *,
    root: str | os.PathLike[str] | None = None,
    listed: bool = False,
) -> Iterator[BinaryIO]:
    """A binary file object over a safely opened regular file (for streaming readers);
    ``listed`` as for :func:`_open`."""
    fd = _open(path, root, listed)
    with os.fdopen(fd, "rb") as fh:
        yield fh


def read_candidate(path: str, regular: bool = False, cap: int = MAX_FILE_BYTES) -> bytes:
    """One file the project walk listed (it has already refused links out of the project).

    ``regular``: the folder listing said this name is a regular file (not a link), so it
    is opened with ``O_NOFOLLOW`` and a file that ends within the first read needs no
    ``fstat``. Anything else is checked with ``fstat`` before more is read; the open never
    blocks, so a FIFO swapped in meanwhile is an error, not a hang.
    """
    fd = os.open(path, READ_FLAGS | (_NOFOLLOW if regular else 0))
    try:
        if regular:
            first = os.read(fd, FIRST_READ)
            if first and len(first) < FIRST_READ:
                return first
            return read_rest(fd, first, cap)  # (an empty read is checked: a FIFO swapped in?)
        return read_rest(fd, b"", cap)
    finally:
        os.close(fd)


def read_rest(fd: int, head: bytes, cap: int = MAX_FILE_BYTES) -> bytes:
    """``head`` plus the rest of ``fd``: a regular file, at most ``cap`` bytes."""
    st = os.fstat(fd)
    if not _stat.S_ISREG(st.st_mode):
        raise NotRegular()
    if st.st_size > cap:
        raise TooLarge(st.st_size, cap)
    chunks = [head] if head else []
    total = len(head)
    want = st.st_size + 1 - total
    first = os.read(fd, max(want, 1))
    chunks.append(first)
    total += len(first)
    if total <= st.st_size:
        return b"".join(chunks)  # a regular file returns what was asked unless at its end
    while True:  # it grew (or /proc reports size 0): read on, capped
        if total > cap:
            raise TooLarge(total, cap)
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    if total > cap:
        raise TooLarge(total, cap)
    return b"".join(chunks)


# -- writing ---------------------------------------------------------------------------


def write_output(
    path: str | os.PathLike[str], data: str | bytes, mode: int = 0, *, sync: bool = True
) -> None:
    """Replace ``path`` with ``data`` atomically; refuse when ``path`` is a symbolic link.
    ``mode``: the file's permissions (0: the default, 0o644 less the umask). ``sync``:
    False for a scratch tree that is thrown away (no ``fsync``).

    Raises :class:`UnsafeWrite` (a link) or OSError (cannot write)."""
    target = Path(path)
    if target.is_symlink():
        raise UnsafeWrite(f"{target}: is a symbolic link; refusing to write through it")
    kind = 0
    with contextlib.suppress(FileNotFoundError):
        kind = _stat.S_IFMT(os.lstat(target).st_mode)
    if kind == _stat.S_IFDIR:
        raise UnsafeWrite(f"{target}: is a folder")
    blob = data.encode("utf-8") if isinstance(data, str) else data
    if kind == _stat.S_IFCHR and _write_device(target, blob):
        return
    import secrets  # (hmac, hashlib: not imported by every run for a temporary name)

    folder = target.parent
    tmp = folder / f".{target.name}.{secrets.token_hex(6)}.agentguard.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o644)
    try:
        with os.fdopen(fd, "wb") as fh:
            if mode:
                os.fchmod(fh.fileno(), mode)
            fh.write(blob)
            fh.flush()
            if sync:
                os.fsync(fh.fileno())
        os.replace(tmp, target)  # rename never follows a link at the target: it replaces it
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _write_device(target: Path, blob: bytes) -> bool:
    """``--output /dev/null`` (a character device) is written to, never replaced by a
    regular file (which a run as root could do, for every process on the machine). False
    when it is no longer a device once opened (then it is replaced like any file)."""
    # (non-blocking open: a FIFO swapped in meanwhile is an error, not a hang)
    fd = os.open(target, os.O_WRONLY | _NOFOLLOW | _CLOEXEC | getattr(os, "O_NONBLOCK", 0))
    try:
        if not _stat.S_ISCHR(os.fstat(fd).st_mode):
            return False
        os.set_blocking(fd, True)
        view = memoryview(blob)
        while view:
            written = os.write(fd, view)
            if written <= 0:
                raise OSError(errno.EIO, "the device took nothing")
            view = view[written:]
    finally:
        os.close(fd)
    return True


def check_folder(folder: str | os.PathLike[str]) -> None:
    """Refuse an output folder that is a symbolic link (or a file)."""
    p = Path(folder)
    if p.is_symlink():
        raise UnsafeWrite(f"{p}: is a symbolic link; refusing to write through it")
    if p.exists() and not p.is_dir():
        raise UnsafeWrite(f"{p}: is not a folder")


def confined(folder: str | os.PathLike[str], name: str) -> Path:
    """``folder / name`` when ``name`` is relative, has no ``..``, and no existing part of
    the way down is a link. Raises :class:`UnsafeWrite`."""
    if not name or os.path.isabs(name) or name.startswith(("/", "\\")):
        raise UnsafeWrite(f"{name!r}: not a relative name inside the output folder")
    parts = Path(name).parts
    if any(p in ("..", "") for p in parts) or "\x00" in name:
        raise UnsafeWrite(f"{name!r}: leaves the output folder")
    check_folder(folder)
    here = Path(folder)
    for part in parts[:-1]:
        here = here / part
        if here.is_symlink() or (here.exists() and not here.is_dir()):
            raise UnsafeWrite(f"{here}: is a symbolic link or not a folder; refusing to write")
    return Path(folder, *parts)


def write_in(
    folder: str | os.PathLike[str],
    name: str,
    data: str | bytes,
    mode: int = 0,
    *,
    sync: bool = True,
) -> Path:
    """Write ``data`` to ``name`` inside ``folder`` (see :func:`confined`), atomically.
    ``mode``: file permissions to set (0: leave the default); ``sync`` as for
    :func:`write_output`."""
    path = confined(folder, name)
    path.parent.mkdir(parents=True, exist_ok=True)
    confined(folder, name)  # again: a folder made meanwhile is not a link
    write_output(path, data, mode, sync=sync)
    return path


def link_in(folder: str | os.PathLike[str], name: str, target: str) -> Path:
    """Make ``name`` inside ``folder`` a symbolic link to ``target`` (see :func:`confined`:
    the link itself is inside; where it points is the reader's concern, and every reader
    refuses a link out of its root). Never replaces an existing entry."""
    if not target or "\x00" in target:
        raise UnsafeWrite(f"{name!r}: not a link target")
    path = confined(folder, name)
    path.parent.mkdir(parents=True, exist_ok=True)
    confined(folder, name)
    os.symlink(target, path)
    return path


def remove_in(folder: str | os.PathLike[str], name: str) -> bool:
    """Remove ``name`` inside ``folder`` (never outside it, never through a link on the
    way). A link at the name itself is removed, not its target. False when refused."""
    try:
        path = confined(folder, name)
    except UnsafeWrite:
        return False
    with contextlib.suppress(FileNotFoundError, IsADirectoryError):
        path.unlink()
    return True
