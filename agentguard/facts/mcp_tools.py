"""An MCP server's ``tools/list`` answer, as the smoke run read it and as ``mcp.lock.json``
records it (:class:`ToolSnapshot`), and one recorded snapshot set beside a live one
(:class:`ToolsCompared`), for AG145.

Everything in a snapshot came from the server, so it is bounded (:data:`MAX_TOOLS` tools,
:data:`MAX_DESCRIPTION` characters of a description, :data:`MAX_SCHEMA` characters of an
input schema): what a cap cut is said in ``truncated``, and the digests are computed over
the whole answer before anything is cut, so a change past a cap still changes a digest.
Frozen records and pure functions: the smoke run fills them, the lock file reader reads
them back, the AG145 rule compares them."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

MAX_TOOLS = 256  # tools recorded (the first by name; the rest counted and digested)
MAX_NAME = 256  # characters of a tool's name
MAX_DESCRIPTION = 4096  # characters of a description kept
MAX_SCHEMA = 16384  # characters of an input schema's canonical JSON kept
MAX_VERSION = 64  # characters of the server's own version (serverInfo.version)
MAX_SNAPSHOT_BYTES = 512 * 1024  # one server's snapshot as written (tools past it: cut)
MAX_NOTES = 64  # lines saying what a cap cut (the last one counts the rest)
MAX_NOTE = 512
# The annotations that say what a tool does to the world (MCP ToolAnnotations): a tool
# that stops being read-only, or becomes destructive, is a new power under an old name.
HINTS = ("readOnlyHint", "destructiveHint", "openWorldHint")


def canonical(value: Any) -> str:
    """The canonical JSON of ``value``: keys sorted, no spaces, non-ASCII as itself."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def sha256(text: str) -> str:
    # surrogatepass: a server's JSON may hold a lone surrogate (``"\\ud800"``); it is data
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class ToolRecord:
    """One tool as recorded. ``description``/``input_schema`` are the kept (bounded,
    redacted) text; ``*_digest`` is set only when the kept text is not the whole value (cut
    at its cap, or a secret masked), so that a change in the part not kept is seen; the
    description's also when the name shown is not the whole name. A record without either
    shows the whole tool: its ``digest`` can be checked against what it shows."""

    name: str
    description: str | None
    input_schema: str | None  # canonical JSON (None: not given, or past MAX_SCHEMA)
    hints: tuple[tuple[str, bool], ...]  # (hint, value) for the HINTS the server set
    digest: str  # sha256 over the canonical JSON of the whole tool (before any cut)
    description_digest: str | None = None
    schema_digest: str | None = None

    def hint(self, name: str) -> bool | None:
        return next((v for k, v in self.hints if k == name), None)


@dataclass(frozen=True)
class ToolSnapshot:
    """A server's ``tools/list`` answer. ``digest``: sha256 over the sorted per-tool digests
    of every entry it listed (also those past :data:`MAX_TOOLS` and entries that are not
    tools); ``count``: the entries it listed; ``truncated``: what a cap cut, one line each."""

    tools: tuple[ToolRecord, ...]
    digest: str
    count: int
    truncated: tuple[str, ...] = ()
    server_version: str | None = None  # what the server said it is (serverInfo.version)
    recorded_with: str | None = None  # the lock: the entry's version when it was recorded
    not_tools: int = 0  # entries of the answer that are not tools (no name): digested only

    @property
    def cut_at_tools(self) -> bool:
        """Only the first :data:`MAX_TOOLS` entries (by name) are recorded."""
        return len(self.tools) < self.count

    def by_name(self) -> dict[str, list[ToolRecord]]:
        out: dict[str, list[ToolRecord]] = {}
        for t in self.tools:
            out.setdefault(t.name, []).append(t)
        return out


def tool_digest(name: str, description: str | None, schema: Any, hints: Any) -> str:
    """A tool's digest: over its name, description, input schema and hints, as sent."""
    whole = {"name": name, "description": description, "inputSchema": schema,
             "annotations": dict(hints)}  # fmt: skip
    return sha256(canonical(whole))


def set_digest(digests: list[str]) -> str:
    """The digest of a whole answer: over the sorted digests of its entries."""
    return sha256(canonical(sorted(digests)))


@dataclass(frozen=True)
class ToolsCompared:
    """A lock entry's recorded snapshot and the live answer of the server it belongs to."""

    server: str
    kind: str  # npm | pypi | image
    package: str
    version: str  # what the lock entry holds now
    lock_path: str  # "mcp.lock.json"
    lock_line: int | None  # the entry's line in it
    launch_path: str
    launch_line: int
    recorded: ToolSnapshot
    live: ToolSnapshot
    # `check --base REF`: ``recorded`` is the snapshot REF's lock records and ``live`` the
    # one the head's lock records (the change re-recorded it: AG146, not AG145)
    base_ref: str | None = None


@dataclass(frozen=True)
class ToolsDropped:
    """`check --base REF`: an entry whose snapshot REF's lock records and the head's lock
    holds without one (the next ``lock --smoke`` records whatever the server answers)."""

    server: str
    package: str
    lock_path: str
    lock_line: int | None
    base_ref: str
    recorded: ToolSnapshot
