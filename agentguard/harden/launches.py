"""``lock --write-launch``: the MCP server launches rewritten to the version
``mcp.lock.json`` holds, every other byte kept (comments, layout, key order, quoting, BOM and
line ends): `.mcp.json`-style files (JSON or JSONC), TOML (Codex ``config.toml``,
OpenHands), YAML (a workflow step's settings) and agent code (Python, TypeScript and
JavaScript).

A launch is rewritten only when exactly one server entry of the file has that name, that
command and those arguments, and exactly one span of the file re-reads as the pinned launch
(:mod:`.launch_edit`); a file whose edits do not re-read as the pinned launches with nothing
else changed is not written. The file is read through the safe-open path and written
through the safe-write path (never through a link, never outside the project, never over a
file that changed since it was read). A launch left alone is named in the notes with the
reason and the pinned command."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from agentguard.facts.agents import McpServer
from agentguard.facts.mcp_pins import IMAGE, PYPI, REWRITABLE_SUFFIXES, ServerLaunch, ServerPin
from agentguard.findings import Source
from agentguard.harden.launch_edit import (
    Edit,
    ReadFile,
    Todo,
    apply,
    done_note,
    failed,
    pinned_args,
    plan_document,
    read_file,
    refused_note,
    server_paths,
    swapped,
    unwritten_note,
    write_checked,
)
from agentguard.harden.launch_python import plan_python
from agentguard.harden.launch_toml import TomlFormat
from agentguard.harden.launch_ts import plan_ts
from agentguard.harden.launch_yaml import YamlFormat
from agentguard.inspect.project.jsonc import load_jsonc, load_jsonc_spans
from agentguard.inspect.project.lined import PARSE_FAILURES
from agentguard.lock.servers.resolve import ServerResult, launches, previous_pin

_JSON_SUFFIXES = (".json", ".jsonc")
_TS_SUFFIXES = (".ts", ".mts", ".cts", ".tsx", ".js", ".mjs", ".cjs", ".jsx")


def _replacement(launch: ServerLaunch, pin: ServerPin) -> str:
    spec = pin.pinned_spec(launch.extras)
    if launch.kind != PYPI or launch.from_flag:
        return json.dumps(spec, ensure_ascii=False)
    flag = "--spec" if launch.launcher == "pipx run" else "--from"
    return ", ".join(json.dumps(x, ensure_ascii=False) for x in (flag, spec, launch.package))


def write_launches(
    root: Path, servers: Sequence[McpServer], result: ServerResult
) -> tuple[tuple[str, ...], tuple[Source, ...]]:
    """Rewrite the launches to the pins of ``result``; (notes, sources)."""
    lock = result.lock
    if lock is None:
        return ("MCP server launches not rewritten: the MCP server lock was not written.",), ()
    found, _ = launches(servers)
    by_server = {(s.path, s.name, s.line): s for s in servers}
    edits: dict[str, list[Todo]] = defaultdict(list)
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
        if not launch.path.endswith(REWRITABLE_SUFFIXES):
            notes.append(refused_note(launch, pin, "not a file format --write-launch edits"))
            continue
        edits[launch.path].append((launch, pin, server))
    sources: list[Source] = []
    for path, todo in sorted(edits.items()):
        notes_, source = _rewrite(root, path, sorted(todo, key=lambda t: t[0].line))
        notes += notes_
        if source is not None:
            sources.append(source)
    return tuple(notes), tuple(sources)


def _rewrite(root: Path, path: str, todo: list[Todo]) -> tuple[list[str], Source | None]:
    read = read_file(root, path)
    if isinstance(read, Source):
        return [], read
    if path.endswith(_JSON_SUFFIXES):
        new, notes, count = _plan_json(read, todo)
    elif path.endswith(".toml"):
        new, notes, count = plan_document(TomlFormat(), read.text, todo)
    elif path.endswith((".yml", ".yaml")):
        new, notes, count = plan_document(YamlFormat(), read.text, todo)
    elif path.endswith(_TS_SUFFIXES):
        new, notes, count = plan_ts(path, read.text, todo)
    else:
        new, notes, count = plan_python(read.text, todo)
    if isinstance(new, Source):
        return [], new
    if new is None:
        return notes, None
    source = write_checked(root, read, new, count)
    return (notes if source.status.value == "ok" else []), source


def _plan_json(read: ReadFile, todo: list[Todo]) -> tuple[str | Source | None, list[str], int]:
    try:
        doc, spans = load_jsonc_spans(read.text)
    except PARSE_FAILURES as exc:
        why = f"MCP server launches not rewritten: {exc}"
        return failed(read.path, why, "rewrite-unreadable"), [], 0
    edits: list[Edit] = []
    notes: list[str] = []
    done: list[str] = []
    expected = doc.value
    for launch, pin, server in todo:
        entries = server_paths(doc.value, server)
        span = spans.get((*entries[0], "args", launch.operand)) if len(entries) == 1 else None
        if span is None:
            notes.append(
                f"{launch.where}: not rewritten: {len(entries)} entries of the file are MCP "
                f"server {launch.server!r} with these arguments (one is needed)."
            )
            continue
        edits.append(Edit(*span, _replacement(launch, pin)))
        where = (*entries[0], "args")
        expected = swapped(expected, where, launch.operand, pinned_args(launch, pin))
        done.append(done_note(launch, pin))
    if not edits:
        return None, notes, 0
    # the edited text is read again: it must be the original with exactly those arguments
    # swapped (as every other format's rewrite is checked)
    text = apply(read.text, edits)
    try:
        same = text is not None and load_jsonc(text).value == expected
    except PARSE_FAILURES:
        same = False
    if not same:
        return None, [*notes, unwritten_note(todo)], 0
    return text, [*notes, *done], len(edits)
