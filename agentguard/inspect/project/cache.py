"""The content cache of a folder scan: what each file holds, kept for the next run.

A re-run of ``inspect`` on a tree where few files changed parses only those: every other
file's facts (what :func:`agentguard.inspect.project.files.process_file` took from it)
come from the cache. Facts, never findings: the rules, the configuration, the policy and
the suppressions run on every run, so a cached entry can change no verdict that its
file's bytes would not.

- Key: a hash (SHA-256) of the file's path, kind and bytes, and of this agentguard (its
  version, a digest of its own modules, the Python that parses), so any change to the code
  that reads a file, or to the file, is a miss. Never what ``stat`` says of the file: the
  tree's author sets its times and size (see docs/security.md), so each cached file is read
  and hashed on every run.
- Where: the folder the user names (``--cache-dir``), else ``$AGENTGUARD_CACHE_DIR/inspect``,
  else the per-user cache folder; never inside the scanned folder (a named one there is
  a usage error, a default one there is not used). One pack per scanned folder, written
  through the safe-write path (0600), holding this run's entries only.
- Hostile on read: a pack is used only when its HMAC-SHA256 verifies under a key the
  scanned repository cannot know (``AGENTGUARD_CACHE_KEY``, else a per-user key file kept
  outside every cache folder); then each entry decodes into agentguard's own records
  only (:mod:`.cache_codec`, JSON, no pickle). A pack that is too large, corrupt,
  tampered with, written under another key or by another agentguard is ignored: every
  file is read again. So a cache planted by a pull request (in the repository, or
  restored from a CI cache it wrote) can never hide a finding.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from agentguard import safeio
from agentguard.cache_key import KEY_ENV as KEY_ENV
from agentguard.cache_key import KEY_FILE as KEY_FILE
from agentguard.cache_key import seal, unseal
from agentguard.cache_key import secret as _secret
from agentguard.inspect.project.cache_codec import BadEntry, Uncacheable, decode, encode

if TYPE_CHECKING:
    from agentguard.inspect.project.files import FileOutcome

FORMAT = b"agentguard-inspect-cache 2\n"
_NOTHING = 0  # the entry of a file read that holds nothing (an empty outcome)
MAX_PACK_BYTES = 256 * 1024 * 1024
R = TypeVar("R")
# (what a forked reader sends back: entries it computed, keys it found)
Records = tuple[dict[str, Any], list[str]]


class CacheDirInside(ValueError):
    """A cache folder named inside the folder being scanned."""


def default_folder() -> Path:
    env = os.environ.get("AGENTGUARD_CACHE_DIR")
    if env:
        return Path(env) / "inspect"
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "agentguard" / "inspect"


def _code_digest() -> bytes:
    """This agentguard: its version, its modules (path, size, time), the Python."""
    import agentguard

    base = os.path.dirname(agentguard.__file__)
    h = hashlib.blake2b(digest_size=16)
    h.update(f"{agentguard.__version__}\0{sys.implementation.name}{sys.version}\0".encode())
    for folder, dirs, files in sorted(os.walk(base)):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith((".py", ".json", ".toml")):
                with contextlib.suppress(OSError):
                    st = os.stat(os.path.join(folder, name))
                    rel = os.path.relpath(os.path.join(folder, name), base)
                    h.update(f"{rel}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
    return h.digest()


@dataclass
class ContentCache:
    folder: Path
    pack: str  # the pack's file name in ``folder``
    secret: bytes
    salt: bytes
    entries: dict[str, Any] = field(default_factory=dict)  # verified, still encoded
    fresh: dict[str, Any] = field(default_factory=dict)  # computed by this process
    found: list[str] = field(default_factory=list)  # keys this process took from entries
    kept: dict[str, Any] = field(default_factory=dict)  # the next pack
    hits: int = 0
    misses: int = 0

    def key(self, rel: str, kind: str, data: bytes) -> str:
        # (SHA-256: where the CPU has SHA instructions, twice as fast as BLAKE2 here)
        h = hashlib.sha256(self.salt)
        h.update(f"{kind}\0{rel}\0{len(data)}\0".encode("utf-8", "surrogateescape"))
        h.update(data)
        return h.hexdigest()[:40]

    def get(self, key: str) -> FileOutcome | None:
        from agentguard.inspect.project.outcome import FileOutcome

        raw = self.entries.get(key)
        if raw is None:
            return None
        if type(raw) is int and raw == _NOTHING:
            self.found.append(key)
            return FileOutcome()
        return self.get_record(key, FileOutcome)

    def get_record(self, key: str, cls: type[R]) -> R | None:
        """The entry under ``key`` when it decodes to a ``cls`` (anything else is dropped:
        recomputed, and replaced in the next pack)."""
        raw = self.entries.get(key)
        if raw is None:
            return None
        out = _decoded(raw)
        if not isinstance(out, cls):
            self.entries.pop(key, None)
            return None
        self.found.append(key)
        return out

    def put_record(self, key: str, value: object) -> None:
        """Keep ``value`` (one of agentguard's records) under ``key``; a value the codec
        does not store is not kept (computed again next run), never stored lossily."""
        with contextlib.suppress(Uncacheable, RecursionError):
            self.fresh[key] = encode(value)

    def put(self, key: str, out: FileOutcome) -> None:
        from agentguard.inspect.project.outcome import FileOutcome

        if out == FileOutcome():  # (most files: read, and nothing in them)
            self.fresh[key] = _NOTHING
            return
        self.put_record(key, out)

    def take(self) -> Records:
        """What this process recorded since the last take (sent back by a forked reader)."""
        got: Records = (self.fresh, self.found)
        self.fresh, self.found = {}, []
        return got

    def merge(self, records: Records) -> None:
        fresh, found = records
        self.misses += len(fresh)
        self.hits += len(found)
        self.kept.update(fresh)
        for k in found:
            if k in self.entries:
                self.kept[k] = self.entries[k]

    def save(self) -> None:
        """Write the next pack when it differs from the one read (never raises)."""
        if not self.fresh and not self.found and self.kept.keys() == self.entries.keys():
            return
        body = json.dumps(
            {"salt": self.salt.hex(), "entries": self.kept}, separators=(",", ":")
        ).encode()
        with contextlib.suppress(OSError):
            os.makedirs(self.folder, mode=0o700, exist_ok=True)
            # (not synced: a pack cut short by a crash fails its seal and is ignored, so
            # every file is read again; the fsync cost a cold run 0.1-0.3 s of waiting)
            safeio.write_in(
                self.folder, self.pack, seal(FORMAT, self.secret, body), mode=0o600, sync=False
            )
            _evict(self.folder, keep=self.pack)


# modules of the records an outcome may hold that the scan imports only where it reads such a
# file (a workflow's local actions, an agent's configuration, a Kubernetes manifest; a run
# that reads none of them does not build their records): a record decodes only into a type
# already imported, so these are imported, by these fixed names, when an entry needs them
_LAZY_RECORDS = (
    "agentguard.facts.agents",
    "agentguard.facts.values",
    "agentguard.facts.image",
    "agentguard.facts.k8s",
    "agentguard.facts.workflows",
    "agentguard.facts.installs",
    "agentguard.facts.mcp_pins",
    "agentguard.facts.mcp_tools",
    "agentguard.facts.npm_tree",
    "agentguard.facts.npm_trust",
    "agentguard.inspect.project.composite",
)


def _decoded(raw: Any) -> object:
    try:
        return decode(raw)
    except RecursionError:
        return None
    except BadEntry:
        named = _modules_named(raw)
        missing = [m for m in _LAZY_RECORDS if m not in sys.modules and m in named]
        if not missing:
            return None
    for name in missing:  # (agentguard's own, by a fixed name: never one the entry names)
        importlib.import_module(name)
    try:
        return decode(raw)
    except (BadEntry, RecursionError):
        return None


def _modules_named(raw: Any) -> set[str]:
    """The modules the records and enums of an encoded entry name (only compared with
    :data:`_LAZY_RECORDS`: what is imported is one of those names, never the entry's)."""
    out: set[str] = set()
    todo = [raw]
    while todo and len(out) < 64:
        value = todo.pop()
        if isinstance(value, list):
            todo += value
        elif isinstance(value, dict):
            for key in ("c", "e"):
                name = value.get(key)
                if isinstance(name, str):
                    out.add(name.partition(":")[0])
            todo += value.values()
    return out


MAX_PACKS = 64  # folders scanned from one cache folder (the least recently written go)


def _evict(folder: Path, keep: str) -> None:
    packs: list[tuple[float, str]] = []
    with os.scandir(folder) as it:
        for entry in it:
            if entry.name.endswith(".pack") and entry.is_file(follow_symlinks=False):
                packs.append((entry.stat(follow_symlinks=False).st_mtime, entry.name))
    packs.sort()
    for _, name in packs[: max(0, len(packs) - MAX_PACKS)]:
        if name != keep:
            safeio.remove_in(folder, name)


def open_cache(root: Path, folder: Path | None) -> ContentCache | None:
    """The cache for a scan of ``root``: ``folder`` when the user named one (raises
    :class:`CacheDirInside` when it is inside ``root``), else the default; None when it
    cannot be used (a default inside ``root``, no key)."""
    named = folder is not None
    where = folder if folder is not None else default_folder()
    real_root = os.path.realpath(root)
    if safeio.inside(os.path.realpath(where), real_root):
        if named:
            raise CacheDirInside(
                f"--cache-dir {where}: inside the folder being scanned; name a folder "
                "outside it (the scanned repository must not hold the cache that reads it)"
            )
        return None
    secret = _secret(where, real_root)
    if secret is None:
        return None
    salt = _code_digest()
    pack = hashlib.sha256(real_root.encode("utf-8", "surrogateescape")).hexdigest()[:32]
    cache = ContentCache(where, f"{pack}.pack", secret, salt)
    cache.entries = _read_pack(where / cache.pack, secret, salt)
    return cache


def _read_pack(path: Path, secret: bytes, salt: bytes) -> dict[str, Any]:
    """The pack's entries when it verifies; {} for anything else."""
    try:
        blob = safeio.read_bytes(path, cap=MAX_PACK_BYTES)
    except OSError:
        return {}
    body = unseal(blob, FORMAT, secret)
    if body is None:
        return {}
    try:
        pack = json.loads(body)
    except (ValueError, RecursionError):
        return {}
    if not isinstance(pack, dict) or pack.get("salt") != salt.hex():
        return {}
    entries = pack.get("entries")
    if not isinstance(entries, dict):
        return {}
    return entries


ACTIVE: ContentCache | None = None  # the cache of the folder scan under way, if any
