"""``lock --write-launch``: the MCP server launches of `.mcp.json`-style files (JSON or
JSONC) rewritten to the version ``mcp.lock.json`` holds, every other byte kept (comments,
layout, key order).

A launch is rewritten only when exactly one server entry of the file has that name, that
command and those arguments (a file with two such entries is left alone, and said so);
the file is read through the safe-open path and written through the safe-write path (never
through a link, never outside the project). A launch in code, TOML or YAML is named in the
notes with the pinned command, not edited."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentguard import safeio
from agentguard.facts.agents import McpServer
from agentguard.facts.mcp_pins import IMAGE, PYPI, ServerLaunch, ServerPin
from agentguard.findings import Source
from agentguard.inspect.project.jsonc import load_jsonc_spans
from agentguard.inspect.project.lined import DocumentError, KeyPath
from agentguard.lock.servers.flow import ServerResult, launches, previous_pin
from agentguard.safeio import MAX_FILE_BYTES

_JSON_SUFFIXES = (".json", ".jsonc")


def _replacement(launch: ServerLaunch, pin: ServerPin) -> str:
    spec = pin.pinned_spec(launch.extras)
    if launch.kind != PYPI or launch.from_flag:
        return json.dumps(spec, ensure_ascii=False)
    flag = "--spec" if launch.launcher == "pipx run" else "--from"
    return ", ".join(json.dumps(x, ensure_ascii=False) for x in (flag, spec, launch.package))


def _entries(value: Any, server: McpServer) -> list[KeyPath]:
    """The key paths of the file's entries that are this server as the reader saw it (its
    name, its command, every argument), found without recursion."""
    want = [server.command, *server.args]
    found: list[KeyPath] = []
    todo: list[tuple[KeyPath, Any]] = [((), value)]
    while todo:
        path, node = todo.pop()
        if isinstance(node, list):
            todo.extend(((*path, i), v) for i, v in enumerate(node))
            continue
        if not isinstance(node, dict):
            continue
        for key, v in node.items():
            todo.append(((*path, key), v))
            if key != server.name or not isinstance(v, dict):
                continue
            args = v.get("args")
            if isinstance(args, list) and [v.get("command"), *args] == want:
                found.append((*path, key))
    return found


def write_launches(
    root: Path, servers: Sequence[McpServer], result: ServerResult
) -> tuple[tuple[str, ...], tuple[Source, ...]]:
    """Rewrite the launches to the pins of ``result``; (notes, sources)."""
    lock = result.lock
    if lock is None:
        return ("MCP server launches not rewritten: the MCP server lock was not written.",), ()
    found, _ = launches(servers)
    by_server = {(s.path, s.name, s.line): s for s in servers}
    edits: dict[str, list[tuple[ServerLaunch, ServerPin, McpServer]]] = defaultdict(list)
    notes: list[str] = []
    for launch in found:
        pin = previous_pin(launch, lock)
        server = by_server.get((launch.path, launch.server, launch.line))
        if pin is None or server is None or launch.kind == IMAGE:
            continue
        if launch.spec == pin.pinned_spec(launch.extras) and (
            launch.kind != PYPI or launch.from_flag
        ):
            continue  # already the pinned form
        if not launch.path.endswith(_JSON_SUFFIXES):
            notes.append(
                f"{launch.where}: not a JSON file; launch `{pin.pinned_command(launch.launcher, launch.extras)}` there by hand."
            )
            continue
        edits[launch.path].append((launch, pin, server))
    sources: list[Source] = []
    for path, todo in sorted(edits.items()):
        notes_, source = _rewrite(root, path, todo)
        notes += notes_
        if source is not None:
            sources.append(source)
    return tuple(notes), tuple(sources)


def _rewrite(
    root: Path, path: str, todo: list[tuple[ServerLaunch, ServerPin, McpServer]]
) -> tuple[list[str], Source | None]:
    try:
        text = safeio.read_text(root / path, root=root, cap=MAX_FILE_BYTES)
        doc, spans = load_jsonc_spans(text)
    except (OSError, UnicodeDecodeError, DocumentError) as exc:
        return [], Source.failed(
            "file", path, f"MCP server launches not rewritten: {exc}",
            error_code="rewrite-unreadable", retryable=False,
        )  # fmt: skip
    edits: list[tuple[int, int, str]] = []
    notes: list[str] = []
    for launch, pin, server in todo:
        entries = _entries(doc.value, server)
        span = spans.get((*entries[0], "args", launch.operand)) if len(entries) == 1 else None
        if span is None:
            notes.append(
                f"{launch.where}: not rewritten: {len(entries)} entries of the file are MCP "
                f"server {launch.server!r} with these arguments (one is needed)."
            )
            continue
        edits.append((*span, _replacement(launch, pin)))
        notes.append(
            f"{launch.where}: MCP server {launch.server!r} now launches "
            f"{pin.pinned_spec(launch.extras)}."
        )
    if not edits:
        return notes, None
    for start, end, new in sorted(edits, reverse=True):
        text = text[:start] + new + text[end:]
    try:
        safeio.write_in(root, path, text)
    except OSError as exc:
        return [], Source.failed(
            "file", path, f"MCP server launches not rewritten: {exc}",
            error_code="rewrite-refused", retryable=False,
        )  # fmt: skip
    return notes, Source.ok("file", path, f"{len(edits)} MCP server launch(es) pinned")
