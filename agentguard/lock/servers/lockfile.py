"""``mcp.lock.json``: the MCP server lock, a file of its own beside the Python lock.

One entry per launch (the file, the server's name, the kind, the package), with the line
it was read from, the exact version (an image: its digest) and what the registry said
of it. Written through the safe-write path only when its content changes (no timestamp:
a re-lock that changes nothing leaves the file as it was); read through the safe-open
path, and a malformed file is a failed source, never an empty lock."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentguard import __version__, escape, redact, safeio
from agentguard.facts.mcp_pins import (
    IMAGE,
    NPM,
    NPM_NAME,
    PYPI,
    PYPI_NAME,
    LockedDependency,
    ServerLock,
    ServerPin,
)
from agentguard.lock.servers import tree_lock, trust_record
from agentguard.lock.servers.tools_lock import SnapshotError, entry_lines, from_lock, to_lock
from agentguard.lock.servers.trust_record import ATTESTATIONS_FILE, RecordError
from agentguard.safeio import MAX_LOCK_BYTES

MCP_LOCK = "mcp.lock.json"
LOCK_VERSION = 1
# 2: an entry may hold `tools` (the server's tools/list answer, recorded by `lock --smoke`).
# A lock with no snapshot is still written as 1, byte for byte as before; one with a
# snapshot is 2, which an agentguard that does not know snapshots refuses to read (and so
# never re-writes it without them).
TOOLS_LOCK_VERSION = 2
# 3: an npm entry may hold `tree` (the server's own dependency tree, as npm resolved it).
# A lock with no tree is still written as 1 or 2, byte for byte as before; one with a tree
# is 3, which an agentguard that reads only 1 and 2 refuses (and so never re-writes it
# without its trees). A lock of 1 or 2 whose npm entries hold no tree still reads: `lock
# --check` reports each such entry (AG142), and the next `lock` records their trees.
TREE_LOCK_VERSION = 3
READ_VERSIONS = (LOCK_VERSION, TOOLS_LOCK_VERSION, TREE_LOCK_VERSION)
_NAMES = {NPM: NPM_NAME, PYPI: PYPI_NAME, IMAGE: re.compile(r"^[a-z0-9][a-z0-9._/:-]{0,254}\Z")}
_VERSIONS = {
    NPM: re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]{1,64})?\Z"),
    PYPI: re.compile(r"^[0-9][0-9A-Za-z.!+_-]{0,63}\Z"),
    IMAGE: re.compile(r"^sha256:[0-9a-f]{64}\Z"),
}


class LockReadError(Exception):
    def __init__(self, message: str, code: str = "mcp-lock-malformed") -> None:
        super().__init__(message)
        self.code = code


def _entry(pin: ServerPin) -> dict[str, Any]:
    out: dict[str, Any] = {
        "launch": {"path": pin.path, "line": pin.line, "server": pin.server},
        "kind": pin.kind,
        "package": pin.package,
        "requested": pin.requested,
        "version": pin.version,
    }
    if pin.kind == NPM:
        out |= {"integrity": pin.integrity, "tarball": pin.tarball, "provenance": pin.provenance}
        if pin.signature is not None:
            out["signature"] = trust_record.signature_json(pin.signature)
        if pin.attestation is not None:
            out["attestation"] = trust_record.attestation_json(pin.attestation)
    if pin.kind == PYPI:
        out["hashes"] = list(pin.hashes)
        out["environment"] = [
            {"name": d.name, "version": d.version, "marker": d.marker, "hashes": list(d.hashes)}
            for d in pin.environment
        ]
    if pin.kind != IMAGE:
        out |= {
            "registry": pin.registry,
            "majors": list(pin.majors),
            "released-majors": list(pin.released_majors),
        }
    if pin.tools is not None:
        out["tools"] = to_lock(pin.tools)
    if pin.kind == NPM and pin.tree is not None:
        out["tree"] = tree_lock.to_lock(pin.tree)
    return out


def lock_version(pins: Sequence[ServerPin]) -> int:
    if any(p.tree is not None for p in pins):
        return TREE_LOCK_VERSION
    return TOOLS_LOCK_VERSION if any(p.tools for p in pins) else LOCK_VERSION


def render(pins: Sequence[ServerPin]) -> str:
    entries = [_entry(p) for p in sorted(pins, key=lambda p: (*p.key, p.line))]
    digest = hashlib.sha256(json.dumps(entries, sort_keys=True).encode()).hexdigest()
    one_line = tree_lock.OneLine()  # each tree package on a line of its own
    data = {
        "lock-version": lock_version(pins),
        "created-by": f"agentguard {__version__}",
        "digest": f"sha256:{digest}",
        "servers": [one_line.mark(e) for e in entries],
    }
    text = one_line.fill(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    # a server's description reaches a diff of this committed file: every invisible or
    # reordering character in it is written as its escape (the same string, shown)
    return escape.json_hidden(text)


def write(root: Path, pins: Sequence[ServerPin]) -> bool:
    """Write the lock (and the attestations kept beside it, :mod:`.trust_record`) when
    its content changes; True when the lock was written. The sibling is written first: a
    lock never records a digest its sibling does not hold yet."""
    side = trust_record.render_sidecar(pins)
    if side is None and (root / ATTESTATIONS_FILE).exists():
        safeio.remove_in(root, ATTESTATIONS_FILE)  # (no entry records a document now)
    elif side is not None and _text(root, ATTESTATIONS_FILE) != side:
        safeio.write_in(root, ATTESTATIONS_FILE, side)
    return write_lock_only(root, pins)


def write_lock_only(root: Path, pins: Sequence[ServerPin]) -> bool:
    """Write ``mcp.lock.json`` alone when its content changes (the attestations beside it
    are left as they are: pins read back from the lock do not hold those documents, only
    their digests, which the lock keeps). True when written."""
    text = render(pins)
    if _text(root, MCP_LOCK) == text:
        return False
    safeio.write_in(root, MCP_LOCK, text)
    return True


def _text(root: Path, name: str) -> str | None:
    try:
        return safeio.read_text(root / name, root=root, cap=trust_record.MAX_SIDECAR_BYTES)
    except (OSError, UnicodeDecodeError):
        return None


def _str(value: object, what: str, *, optional: bool = False) -> Any:
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value or len(value) > 4096:
        raise LockReadError(f"{what}: not a string")
    return value


def _strs(value: object, what: str) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise LockReadError(f"{what}: not a list")
    return tuple(_str(v, what) for v in value)


def _pin(i: int, e: object, lines: list[int]) -> ServerPin:
    where = f"servers[{i}]"
    if not isinstance(e, dict) or not isinstance(e.get("launch"), dict):
        raise LockReadError(f"{where}: not an entry with a launch")
    launch = e["launch"]
    kind = e.get("kind")
    if kind not in (NPM, PYPI, IMAGE):
        raise LockReadError(f"{where}.kind: not npm, pypi or image")
    line = launch.get("line")
    if not isinstance(line, int) or isinstance(line, bool) or line < 0:
        raise LockReadError(f"{where}.launch.line: not a line number")
    env: list[LockedDependency] = []
    for j, d in enumerate(e.get("environment") or []):
        if not isinstance(d, dict):
            raise LockReadError(f"{where}.environment[{j}]: not a table")
        env.append(
            LockedDependency(
                _str(d.get("name"), f"{where}.environment[{j}].name"),
                _str(d.get("version"), f"{where}.environment[{j}].version"),
                _str(d.get("marker"), f"{where}.environment[{j}].marker", optional=True),
                _strs(d.get("hashes", []), f"{where}.environment[{j}].hashes"),
            )
        )
    version = _str(e.get("version"), f"{where}.version")
    package = _str(e.get("package"), f"{where}.package")
    # The lock is the pull request's file too: what a fix quotes from it (the name and the
    # version, pasted into a command line) must be a name and a version, never shell text.
    if not _NAMES[kind].match(package) or not _VERSIONS[kind].match(version):
        raise LockReadError(f"{where}: not a valid {kind} package name and version")
    provenance = e.get("provenance")
    tools = None
    if e.get("tools") is not None:
        try:
            tools = from_lock(e["tools"], f"{where}.tools")
        except SnapshotError as exc:
            raise LockReadError(str(exc)) from None
    try:
        signature = trust_record.signature_of(e.get("signature"), where)
        attestation = trust_record.attestation_of(e.get("attestation"), where)
        tree = None if e.get("tree") is None else tree_lock.from_lock(e["tree"], f"{where}.tree")
    except (RecordError, tree_lock.TreeLockError) as exc:
        raise LockReadError(str(exc)) from None
    if tree is not None and kind != NPM:
        raise LockReadError(f"{where}.tree: only an npm entry holds a tree")
    return ServerPin(
        kind=kind,
        package=package,
        version=version,
        server=_str(launch.get("server"), f"{where}.launch.server"),
        path=_str(launch.get("path"), f"{where}.launch.path"),
        line=line,
        requested=_str(e.get("requested"), f"{where}.requested", optional=True),
        integrity=_str(e.get("integrity"), f"{where}.integrity", optional=True),
        tarball=_str(e.get("tarball"), f"{where}.tarball", optional=True),
        registry=_str(e.get("registry"), f"{where}.registry", optional=True),
        hashes=_strs(e.get("hashes", []), f"{where}.hashes"),
        environment=tuple(env),
        majors=_strs(e.get("majors", []), f"{where}.majors"),
        released_majors=_strs(e.get("released-majors", []), f"{where}.released-majors"),
        provenance=provenance if isinstance(provenance, bool) else None,
        tools=tools,
        entry_line=lines[i] if i < len(lines) else None,
        signature=signature,
        attestation=attestation,
        tree=tree,
    )


class _TwiceError(ValueError):
    pass


def _table(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object of the lock, refused when a key stands twice in it: a reader takes the
    last value, a reviewer of the diff reads the first (a harmless description above the
    one compared), so two candidates are never resolved by taking either."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _TwiceError(f"the key {redact.quote(key, 64)} stands twice in one table")
        out[key] = value
    return out


def read(root: Path) -> ServerLock | None:
    """The lock (None: there is none). Raises :class:`LockReadError` (or OSError)."""
    path = root / MCP_LOCK
    if not path.exists() and not path.is_symlink():
        return None
    try:
        text = safeio.read_text(path, root=root, cap=MAX_LOCK_BYTES)
        data = json.loads(text, object_pairs_hook=_table)
    except _TwiceError as exc:
        raise LockReadError(str(exc)) from None
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise LockReadError(f"not JSON ({type(exc).__name__})") from None
    version = data.get("lock-version") if isinstance(data, dict) else None
    if not isinstance(data, dict) or version not in READ_VERSIONS or isinstance(version, bool):
        raise LockReadError(
            "not an MCP server lock of version "
            + ", ".join(str(v) for v in READ_VERSIONS[:-1])
            + f" or {READ_VERSIONS[-1]}"
        )
    servers = data.get("servers")
    if not isinstance(servers, list):
        raise LockReadError("`servers` is not a list")
    lines = entry_lines(text)
    if len(lines) != len(servers):
        lines = []  # (a layout the scan does not follow: no line, rather than a wrong one)
    pins = tuple(_pin(i, e, lines) for i, e in enumerate(servers))
    if version == LOCK_VERSION and any(p.tools for p in pins):
        raise LockReadError(
            f"an entry holds `tools`, which a lock of version {LOCK_VERSION} never does"
        )
    if version != TREE_LOCK_VERSION and any(p.tree for p in pins):
        raise LockReadError(f"an entry holds `tree`, which a lock of version {version} never does")
    return ServerLock(MCP_LOCK, pins, str(data.get("digest", "")))
