"""The base revision of ``check --base REF``, read straight from git into a private folder.

Nothing is checked out and nothing of the repository runs: the ref is resolved in the
repository with every program-running setting overridden on the command line, and the
tree and blobs are then read (``ls-tree -r -z -l``, ``cat-file --batch``) through a
private, empty git folder whose object store is the repository's
(``GIT_OBJECT_DIRECTORY``): the repository's own configuration (filters, textconv,
hooks, fsmonitor, a partial clone's promisor remote, ``include.path``), its attributes,
replace refs and grafts are never read for the content. Files are written through the
one safe-write path (:func:`agentguard.safeio.write_in`), links as links
(:func:`agentguard.safeio.link_in`: where they point is the readers' concern, and every
reader refuses a link out of its root), capped in count, total and per-file bytes.
Submodules and entries named ``.git`` are skipped sources. A base that cannot be read
(no git, not a repository, unknown ref, a shallow clone without it, a cap passed) is a
failed source: never "no change".
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from agentguard import safegit, safeio
from agentguard.findings import Source

MAX_BASE_FILES = 100_000
MAX_BASE_BYTES = 512 * 1024 * 1024
MAX_BASE_FILE_BYTES = safeio.MAX_LOCK_BYTES  # the largest file any reader reads
MAX_LINK_BYTES = 4096
GIT_TIMEOUT = 120
_SKIPS_LISTED = 20
_NAME_ERRORS = (
    errno.ENAMETOOLONG,
    errno.EILSEQ,
    errno.EINVAL,
)  # skipped entries listed one by one; the rest are counted


class BaseUnreadable(Exception):
    """The base revision cannot be read: a failed source with this code and reason."""

    def __init__(self, code: str, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason


@dataclass(frozen=True)
class BaseTree:
    """The base revision's copy of the project folder (``folder``) and what was read."""

    ref: str
    commit: str | None
    folder: Path | None  # None: the base could not be read (see sources)
    sources: tuple[Source, ...]
    files: int = 0


def _env(home: Path, git_dir: Path | None = None, objects: str | None = None) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_ATTR_NOSYSTEM": "1",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_NO_REPLACE_OBJECTS": "1",
        "GIT_NO_LAZY_FETCH": "1",
        "GIT_OPTIONAL_LOCKS": "0",
        "GIT_ASKPASS": "false",
        "SSH_ASKPASS": "false",
        "LC_ALL": "C",
    }
    if git_dir is not None and objects is not None:
        env["GIT_DIR"] = str(git_dir)
        env["GIT_OBJECT_DIRECTORY"] = objects
    return env


def _run(git: str, env: dict[str, str], cwd: Path, *args: str) -> bytes:
    try:
        proc = subprocess.run(
            safegit.argv(git, *args),
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=GIT_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BaseUnreadable("base-unreadable", f"git {args[0]} failed: {exc}") from None
    if proc.returncode != 0:
        first = proc.stderr.decode("utf-8", "replace").strip().splitlines()[:1]
        raise BaseUnreadable("base-unreadable", f"git {args[0]}: {first[0] if first else 'failed'}")
    return proc.stdout


def _private_git_dir(scratch: Path, object_format: str) -> Path:
    """An empty git folder of ours: no configuration of the repository is ever read."""
    git_dir = scratch / "git"
    safeio.write_in(git_dir, "HEAD", "ref: refs/heads/base\n", sync=False)
    config = "[core]\n\trepositoryformatversion = 0\n\tbare = true\n"
    if object_format != "sha1":
        config = (
            "[core]\n\trepositoryformatversion = 1\n\tbare = true\n"
            f"[extensions]\n\tobjectformat = {object_format}\n"
        )
    safeio.write_in(git_dir, "config", config, sync=False)
    (git_dir / "refs").mkdir()
    (git_dir / "objects").mkdir()
    return git_dir


@dataclass(frozen=True)
class _Entry:
    mode: str
    kind: str
    oid: str
    size: int | None
    path: str


def _entries(listing: bytes) -> list[_Entry]:
    out = []
    for record in listing.split(b"\0"):
        if not record:
            continue
        head, _, raw_path = record.partition(b"\t")
        parts = head.split()
        if len(parts) != 4:
            raise BaseUnreadable("base-unreadable", "git ls-tree: an entry it did not explain")
        mode, kind, oid, size = (p.decode("ascii", "replace") for p in parts)
        path = raw_path.decode("utf-8", "surrogateescape")
        out.append(_Entry(mode, kind, oid, int(size) if size.isdigit() else None, path))
    return out


def _skip_reason(entry: _Entry) -> str | None:
    parts = entry.path.split("/")
    if any(p.lower() in (".git", "..", ".", "") for p in parts) or "\0" in entry.path:
        return "a path git would not check out (`.git`, `..`): not written"
    if entry.kind == "commit":
        return "a submodule: another repository's content, not read"
    if entry.kind != "blob":
        return f"a {entry.kind} entry: not read"
    if entry.mode == "120000":
        if entry.size is not None and entry.size > MAX_LINK_BYTES:
            return "a link whose target is longer than a path: not written"
        return None
    if entry.size is None:  # git could not tell: the object is missing (a partial clone)
        raise BaseUnreadable(
            "base-unreadable",
            f"{entry.path}: its content is not in the repository (a partial or damaged "
            "clone); nothing is fetched to get it",
        )
    if entry.size > MAX_BASE_FILE_BYTES:
        return f"{entry.size} bytes: larger than any file a reader reads, not read"
    return None


def _cat_blobs(
    git: str, env: dict[str, str], cwd: Path, oids: list[str], take: Callable[[str, bytes], None]
) -> None:
    """Every blob in ``oids`` through one ``cat-file --batch`` (raw: no filter, no
    textconv), each handed to ``take`` as it arrives (one blob in memory at a time)."""
    if not oids:
        return
    proc = subprocess.Popen(
        safegit.argv(git, "cat-file", "--batch"),
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    stdin, stdout = proc.stdin, proc.stdout
    assert stdin is not None and stdout is not None

    def feed() -> None:
        with contextlib.suppress(OSError):
            for oid in oids:
                stdin.write(oid.encode("ascii") + b"\n")
            stdin.close()

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    try:
        for oid in oids:
            header = stdout.readline().split()
            if len(header) != 3 or header[1] != b"blob" or not header[2].isdigit():
                raise BaseUnreadable("base-unreadable", f"git cat-file: object {oid} not read")
            size = int(header[2])
            if size > MAX_BASE_FILE_BYTES:
                raise BaseUnreadable("base-unreadable", f"git cat-file: {oid} grew past the cap")
            data = stdout.read(size)
            stdout.read(1)
            if len(data) != size:
                raise BaseUnreadable("base-unreadable", f"git cat-file: {oid} cut short")
            take(oid, data)
    finally:
        proc.kill()
        proc.wait()
        writer.join(timeout=5)


def _resolve(git: str, project: Path, ref: str, home: Path) -> tuple[str, str, str, str]:
    """(commit, the project's path inside the repository, objects folder, object format)."""
    env = _env(home)
    try:
        checkout = safegit.checkout_of(git, project, env, GIT_TIMEOUT)
    except safegit.NotACheckout as exc:
        raise BaseUnreadable("base-unreadable", str(exc)) from None
    info = _run(
        git,
        env,
        checkout.top,
        "rev-parse",
        "--path-format=absolute",
        "--git-path",
        "objects",
        "--show-object-format",
    ).decode("utf-8", "surrogateescape")
    lines = info.split("\n")
    if len(lines) < 2:
        raise BaseUnreadable("base-unreadable", "git rev-parse: not a repository")
    objects, object_format = lines[0], lines[1]
    prefix = checkout.prefix
    try:
        commit = _run(
            git, env, checkout.top, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"
        )
    except BaseUnreadable:
        raise BaseUnreadable(
            "base-ref-unknown",
            f"{ref!r} is not a commit this repository has (a shallow clone without it, "
            "or a ref not fetched)",
        ) from None
    return commit.decode("ascii", "replace").strip(), prefix.rstrip("/"), objects, object_format


def read_base(project: Path, ref: str, scratch: Path) -> BaseTree:
    """The base revision ``ref`` of the project folder, written below ``scratch`` (a
    private folder the caller made and removes)."""
    git = shutil.which("git")
    if git is None:
        return _failed(ref, None, "base-unreadable", "git is not installed")
    home = scratch / "home"
    home.mkdir()
    commit: str | None = None
    try:
        commit, prefix, objects, object_format = _resolve(git, project, ref, home)
        git_dir = _private_git_dir(scratch, object_format)
        env = _env(home, git_dir, objects)
        tree = f"{commit}:{prefix}" if prefix else commit
        folder = scratch / "tree"
        folder.mkdir()
        try:
            _run(git, env, scratch, "cat-file", "-e", tree)
        except BaseUnreadable:
            note = f"the project folder {prefix!r} is not in {ref}: every finding is new"
            return BaseTree(ref, commit, folder, (_ok(ref, commit, note),))
        entries = _entries(_run(git, env, scratch, "ls-tree", "-r", "-z", "-l", tree))
        return _write(git, env, scratch, folder, ref, commit, entries)
    except BaseUnreadable as exc:
        return _failed(ref, commit, exc.code, exc.reason)
    except OSError as exc:
        return _failed(ref, commit, "base-unreadable", f"cannot write the base's copy: {exc}")


def _write(
    git: str,
    env: dict[str, str],
    scratch: Path,
    folder: Path,
    ref: str,
    commit: str,
    entries: list[_Entry],
) -> BaseTree:
    if len(entries) > MAX_BASE_FILES:
        raise BaseUnreadable(
            "base-too-large", f"{len(entries)} entries: more than {MAX_BASE_FILES}"
        )
    wanted: list[_Entry] = []
    skipped: list[tuple[str, str]] = []
    for entry in entries:
        why = _skip_reason(entry)
        if why is None:
            wanted.append(entry)
        else:
            skipped.append((entry.path, why))
    total = sum(e.size or 0 for e in wanted)
    if total > MAX_BASE_BYTES:
        raise BaseUnreadable("base-too-large", f"{total} bytes: more than {MAX_BASE_BYTES}")
    by_oid: dict[str, list[_Entry]] = {}
    for entry in wanted:
        by_oid.setdefault(entry.oid, []).append(entry)
    links: list[tuple[_Entry, bytes]] = []

    def take(oid: str, data: bytes) -> None:
        for entry in by_oid[oid]:
            if entry.mode == "120000":
                links.append((entry, data))
                continue
            try:
                mode = 0o755 if entry.mode == "100755" else 0o644
                safeio.write_in(folder, entry.path, data, mode, sync=False)
            except safeio.UnsafeWrite as exc:
                skipped.append((entry.path, f"not written: {exc}"))
            except OSError as exc:  # a name this file system refuses; a full disk fails
                if exc.errno not in _NAME_ERRORS:
                    raise
                skipped.append((entry.path, f"not written: {exc.strerror}"))

    _cat_blobs(git, env, scratch, list(by_oid), take)
    for entry, data in links:  # last: no file is written through a link of the tree
        try:
            safeio.link_in(folder, entry.path, data.decode("utf-8", "surrogateescape"))
        except (safeio.UnsafeWrite, OSError) as exc:
            skipped.append((entry.path, f"link not written: {exc}"))
    sources = [_ok(ref, commit, f"{len(wanted)} files read from git, nothing checked out")]
    for path, why in skipped[:_SKIPS_LISTED]:
        sources.append(Source.skipped("base", f"{ref}:{path}", why))
    if len(skipped) > _SKIPS_LISTED:
        more = len(skipped) - _SKIPS_LISTED
        sources.append(Source.skipped("base", f"{ref}:...", f"{more} more entries skipped"))
    return BaseTree(ref, commit, folder, tuple(sources), files=len(wanted))


def _ok(ref: str, commit: str, reason: str) -> Source:
    return Source.ok("base", f"{ref} ({commit[:12]})", reason)


def _failed(ref: str, commit: str | None, code: str, reason: str) -> BaseTree:
    name = f"{ref} ({commit[:12]})" if commit else ref
    remedy = (
        "Fetch the base commit (actions/checkout with `fetch-depth: 0`, or "
        "`git fetch origin BASE`) and re-run; without it nothing is known to be new"
    )
    if code == "base-too-large":
        remedy = "Check a smaller folder (the path argument) or run `check` without --base"
    source = Source.failed("base", name, reason, error_code=code, retryable=False, remedy=remedy)
    return BaseTree(ref, commit, None, (source,))
