"""The ``tools`` of an ``mcp.lock.json`` entry: a server's ``tools/list`` answer as the
smoke run recorded it (:class:`~agentguard.facts.mcp_tools.ToolSnapshot`), written and
read back. The lock is the pull request's file too: every field read is checked against
the caps the recorder keeps, and anything else is a malformed lock, never a snapshot."""

from __future__ import annotations

import json
import re
from typing import Any

from agentguard.facts.mcp_tools import (
    HINTS,
    MAX_DESCRIPTION,
    MAX_NAME,
    MAX_NOTE,
    MAX_NOTES,
    MAX_SCHEMA,
    MAX_TOOLS,
    MAX_VERSION,
    ToolRecord,
    ToolSnapshot,
    set_digest,
    tool_digest,
)

_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")


class SnapshotError(ValueError):
    pass


def to_lock(snap: ToolSnapshot) -> dict[str, Any]:
    tools = []
    for t in snap.tools:
        out: dict[str, Any] = {
            "name": t.name,
            "description": t.description,
            "input-schema": t.input_schema,
            "annotations": dict(t.hints),
            "digest": t.digest,
        }
        if t.description_digest:
            out["description-digest"] = t.description_digest
        if t.schema_digest:
            out["input-schema-digest"] = t.schema_digest
        tools.append(out)
    out = {
        "recorded-with": snap.recorded_with,
        "server-version": snap.server_version,
        "count": snap.count,
        "digest": snap.digest,
        "truncated": list(snap.truncated),
        "list": tools,
    }
    if snap.not_tools:
        out["not-tools"] = snap.not_tools
    return out


def _text(value: object, what: str, cap: int, *, optional: bool = False) -> Any:
    if value is None and optional:
        return None
    if not isinstance(value, str) or len(value) > cap or (not value and not optional):
        raise SnapshotError(f"{what}: not a string of at most {cap} characters")
    return value


def _digest(value: object, what: str, *, optional: bool = False) -> Any:
    if value is None and optional:
        return None
    if not isinstance(value, str) or not _DIGEST.match(value):
        raise SnapshotError(f"{what}: not a sha256 digest")
    return value


def _record(i: int, t: object, where: str) -> ToolRecord:
    at = f"{where}.list[{i}]"
    if not isinstance(t, dict):
        raise SnapshotError(f"{at}: not a table")
    notes = t.get("annotations", {})
    if not isinstance(notes, dict) or any(
        k not in HINTS or not isinstance(v, bool) for k, v in notes.items()
    ):
        raise SnapshotError(f"{at}.annotations: not {', '.join(HINTS)} as booleans")
    return ToolRecord(
        name=_text(t.get("name"), f"{at}.name", MAX_NAME),
        description=_text(t.get("description"), f"{at}.description", MAX_DESCRIPTION, optional=True),
        input_schema=_text(t.get("input-schema"), f"{at}.input-schema", MAX_SCHEMA, optional=True),
        hints=tuple((h, notes[h]) for h in HINTS if h in notes),
        digest=_digest(t.get("digest"), f"{at}.digest"),
        description_digest=_digest(t.get("description-digest"), at, optional=True),
        schema_digest=_digest(t.get("input-schema-digest"), at, optional=True),
    )  # fmt: skip


def from_lock(value: object, where: str) -> ToolSnapshot:
    """The snapshot an entry's ``tools`` holds; raises :class:`SnapshotError`."""
    if not isinstance(value, dict):
        raise SnapshotError(f"{where}: not a table")
    count = value.get("count")
    if not isinstance(count, int) or isinstance(count, bool) or not 0 <= count <= 10**6:
        raise SnapshotError(f"{where}.count: not a count")
    listed = value.get("list")
    if not isinstance(listed, list) or len(listed) > min(count, MAX_TOOLS):
        raise SnapshotError(f"{where}.list: not a list of at most {MAX_TOOLS} tools")
    notes = value.get("truncated", [])
    if not isinstance(notes, list) or len(notes) > MAX_NOTES:
        raise SnapshotError(f"{where}.truncated: not a list of notes")
    others = value.get("not-tools", 0)
    if not isinstance(others, int) or isinstance(others, bool) or not 0 <= others <= 10**6:
        raise SnapshotError(f"{where}.not-tools: not a count")
    snap = ToolSnapshot(
        tools=tuple(_record(i, t, where) for i, t in enumerate(listed)),
        digest=_digest(value.get("digest"), f"{where}.digest"),
        count=count,
        truncated=tuple(_text(n, f"{where}.truncated", MAX_NOTE) for n in notes),
        server_version=_text(value.get("server-version"), where, MAX_VERSION, optional=True),
        recorded_with=_text(value.get("recorded-with"), where, 128, optional=True),
        not_tools=others,
    )
    _verify(snap, where)
    return snap


def _verify(snap: ToolSnapshot, where: str) -> None:
    """The digests must be those of what the snapshot shows, wherever it shows the whole
    value: otherwise a lock edited to show a harmless description under the digest of
    another one would pass review and the comparison alike."""
    for i, t in enumerate(snap.tools):
        if t.description_digest or t.schema_digest:
            continue  # (kept text is not the whole value: only its digest is known)
        try:
            schema = None if t.input_schema is None else json.loads(t.input_schema)
        except (ValueError, RecursionError):
            raise SnapshotError(f"{where}.list[{i}].input-schema: not JSON") from None
        if tool_digest(t.name, t.description, schema, t.hints) != t.digest:
            raise SnapshotError(
                f"{where}.list[{i}].digest: not the digest of the tool the entry shows"
            )
    whole = not snap.cut_at_tools and not snap.not_tools
    if whole and set_digest([t.digest for t in snap.tools]) != snap.digest:
        raise SnapshotError(f"{where}.digest: not the digest of the tools the entry shows")


# what entry_lines looks at: a whole string (skipped as one token) or a bracket
_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[{}\[\]]', re.DOTALL)


def entry_lines(text: str) -> list[int]:
    """The line (1-based) where each element of the top-level ``servers`` array starts, in
    order: a scan of the JSON text outside its strings (a key named ``servers`` deeper in
    the file, or inside a string, is not the array). Strings are skipped whole by one regex
    (a lock holding npm trees is thousands of lines: a scan character by character took
    tens of milliseconds)."""
    lines: list[int] = []
    depth, line, counted = 0, 1, 0
    key: str | None = None  # the last string read at depth 1 (the root's keys)
    in_servers = False
    for m in _TOKENS.finditer(text):
        token = m.group()
        c = token[0]
        if c == '"':
            if depth == 1:
                key = token[1:-1]
        elif c in "{[":
            if depth == 1 and c == "[" and key == "servers":
                in_servers = True
            elif depth == 2 and in_servers:
                line += text.count("\n", counted, m.start())
                counted = m.start()
                lines.append(line)
            depth += 1
        else:
            depth -= 1
            if depth == 1:
                in_servers = False
    return lines
