"""What every ``--write-launch`` rewrite shares, whatever the file's format: the launch
arguments a pin writes, the file read once (through the safe-open path, its BOM and line
ends kept), the plan checked by re-reading the edited text, and the write (through the
safe-write path, refused when the file changed since it was read).

A format (:mod:`.launch_toml`, :mod:`.launch_yaml`) offers the string tokens of a text
that spell a value, the text that writes other values in a token's own style, and a
parsed view of a text. An edit is kept only when the view of the edited text equals the
view of the original with exactly that launch's arguments swapped; every other byte is the
file's own, by construction."""

from __future__ import annotations

import copy
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from agentguard import safeio
from agentguard.facts.agents import McpServer
from agentguard.facts.mcp_pins import PYPI, ServerLaunch, ServerPin
from agentguard.findings import Source
from agentguard.inspect.project.lined import PARSE_FAILURES, KeyPath
from agentguard.safeio import MAX_FILE_BYTES

BOM = "\ufeff"
MAX_CANDIDATES = 32  # tokens tried per launch (each is one re-parse of the file)
# what one file's rewrite may re-read, in characters parsed (every launch and every token
# tried costs a parse of the whole text): a small file has room for hundreds of re-reads,
# a hostile 4 MiB one for a few, never minutes of a run
MAX_REPARSED_CHARS = 8 * 1024 * 1024
OVER_BUDGET = "the file is too large to check this many edits in one run"

Todo = tuple[ServerLaunch, ServerPin, McpServer]


def pinned_args(launch: ServerLaunch, pin: ServerPin) -> list[str]:
    """The argument(s) that replace the launch's operand: the pinned spec, or for a PyPI
    launch without ``--from``/``--spec`` the flag, the spec and the tool's name."""
    spec = pin.pinned_spec(launch.extras)
    if launch.kind != PYPI or launch.from_flag:
        return [spec]
    flag = "--spec" if launch.launcher == "pipx run" else "--from"
    return [flag, spec, launch.package]


def done_note(launch: ServerLaunch, pin: ServerPin) -> str:
    return (
        f"{launch.where}: MCP server {launch.server!r} now launches "
        f"{pin.pinned_spec(launch.extras)}."
    )


def unwritten_note(todo: Sequence[Todo]) -> str:
    return (
        f"{todo[0][0].path}: not written (the edits together did not re-read as the pinned "
        "launches); launch the pinned commands there by hand."
    )


def refused_note(launch: ServerLaunch, pin: ServerPin, why: str) -> str:
    return (
        f"{launch.where}: not rewritten ({why}); launch "
        f"`{pin.pinned_command(launch.launcher, launch.extras)}` there by hand."
    )


class Budget:
    """The re-reads left for one file's rewrite (:data:`MAX_REPARSED_CHARS`)."""

    def __init__(self, text: str) -> None:
        self.left = MAX_REPARSED_CHARS // max(len(text), 1)

    def take(self, parses: int) -> bool:
        """Spend ``parses`` re-reads (False, nothing spent: not that many are left)."""
        if parses > self.left:
            return False
        self.left -= parses
        return True


@dataclass(frozen=True)
class Edit:
    start: int
    end: int
    new: str


@dataclass(frozen=True)
class Token:
    """A string token of a text: where it is, what it spells, how it is written."""

    start: int
    end: int
    value: str
    style: str


class Format(Protocol):
    name: str

    def view(self, text: str) -> Any:
        """The parsed text (raises DocumentError, or any of PARSE_FAILURES)."""

    def tokens(self, text: str, value: str) -> list[Token]:
        """The tokens of ``text`` that spell ``value``."""

    def encode(self, text: str, token: Token, values: Sequence[str]) -> str | None:
        """``values`` written in the token's style, in its place (None: it cannot)."""


@dataclass(frozen=True)
class ReadFile:
    """A file as read: its bytes (to see a change before the write), its text without the
    BOM (spans are offsets in it), the BOM, and its permissions."""

    path: str
    raw: bytes
    text: str
    bom: str
    mode: int


def read_file(root: Path, path: str) -> ReadFile | Source:
    try:
        raw = safeio.read_bytes(root / path, root=root, cap=MAX_FILE_BYTES)
        text = raw.decode("utf-8")
        mode = stat.S_IMODE(os.lstat(root / path).st_mode)
    except (OSError, UnicodeDecodeError) as exc:
        return failed(path, f"MCP server launches not rewritten: {exc}", "rewrite-unreadable")
    bom = BOM if text.startswith(BOM) else ""
    return ReadFile(path, raw, text[len(bom) :], bom, mode)


def failed(path: str, why: str, code: str) -> Source:
    return Source.failed("file", path, why, error_code=code, retryable=False)


def apply(text: str, edits: Sequence[Edit]) -> str | None:
    """``text`` with ``edits`` made (None when two of them overlap)."""
    last = len(text) + 1
    for e in sorted(edits, key=lambda e: e.start, reverse=True):
        if e.end > last:
            return None
        text = text[: e.start] + e.new + text[e.end :]
        last = e.start
    return text


def write_checked(root: Path, read: ReadFile, text: str, count: int) -> Source:
    """Write ``text`` over the file unless it changed since it was read."""
    try:
        now = safeio.read_bytes(root / read.path, root=root, cap=MAX_FILE_BYTES)
    except OSError as exc:
        return failed(read.path, f"MCP server launches not rewritten: {exc}", "rewrite-unreadable")
    if now != read.raw:
        return failed(
            read.path,
            "MCP server launches not rewritten: the file changed while this run read it",
            "rewrite-changed",
        )
    try:
        safeio.write_in(root, read.path, (read.bom + text).encode("utf-8"), read.mode)
    except OSError as exc:
        return failed(read.path, f"MCP server launches not rewritten: {exc}", "rewrite-refused")
    return Source.ok("file", read.path, f"{count} MCP server launch(es) pinned")


def server_paths(value: Any, server: McpServer) -> list[KeyPath]:
    """The key paths of the mappings in ``value`` that are this server as the reader saw it:
    named so (its key, or its ``name``), with its command and every argument. Found
    without recursion."""
    want = [server.command, *server.args] if isinstance(server.args, tuple) else None
    found: list[KeyPath] = []
    todo: list[tuple[KeyPath, Any]] = [((), value)]
    while todo:
        path, node = todo.pop()
        if isinstance(node, list):
            todo.extend(((*path, i), v) for i, v in enumerate(node))
            continue
        if not isinstance(node, dict):
            continue
        todo.extend(((*path, k), v) for k, v in node.items())
        named = (path and path[-1] == server.name) or node.get("name") == server.name
        args = node.get("args")
        if named and isinstance(args, list) and [node.get("command"), *args] == want:
            found.append(path)
    return found


def swapped(value: Any, where: KeyPath, index: int, values: Sequence[str]) -> Any:
    """A copy of ``value`` whose list at ``where`` has its item ``index`` replaced by
    ``values``."""
    out = copy.deepcopy(value)
    node = out
    for key in where:
        node = node[key]
    node[index : index + 1] = list(values)
    return out


def _view(fmt: Format, text: str) -> tuple[bool, Any]:
    try:
        return True, fmt.view(text)
    except PARSE_FAILURES:
        return False, None


def plan_document(
    fmt: Format, text: str, todo: Sequence[Todo]
) -> tuple[str | None, list[str], int]:
    """The edited text (None: nothing to write), the notes, and how many launches it pins."""
    ok, view = _view(fmt, text)
    if not ok:
        return (
            None,
            [refused_note(x, p, f"the {fmt.name} file cannot be read") for x, p, _ in todo],
            0,
        )
    edits: list[Edit] = []
    notes: list[str] = []
    expected = view
    done: list[str] = []
    budget = Budget(text)
    budget.take(1)  # the check of every edit at once
    for launch, pin, server in todo:
        paths = server_paths(view, server)
        if len(paths) != 1:
            notes.append(
                refused_note(
                    launch, pin, f"{len(paths)} entries of the file are this server (one is needed)"
                )
            )
            continue
        values = pinned_args(launch, pin)
        want = swapped(view, (*paths[0], "args"), launch.operand, values)
        hits, why = _hits(fmt, text, launch.spec, values, want, budget)
        if len(hits) != 1:
            notes.append(refused_note(launch, pin, why or f"{len(hits)} spans spell the argument"))
            continue
        edits.append(hits[0])
        expected = swapped(expected, (*paths[0], "args"), launch.operand, values)
        done.append(done_note(launch, pin))
    if not edits:
        return None, notes, 0
    return _final(fmt, text, edits, expected, notes, done, todo)


def _final(
    fmt: Format,
    text: str,
    edits: list[Edit],
    expected: Any,
    notes: list[str],
    done: list[str],
    todo: Sequence[Todo],
) -> tuple[str | None, list[str], int]:
    """Every edit at once, checked once more as a whole."""
    new = apply(text, edits)
    ok, got = (False, None) if new is None else _view(fmt, new)
    if not ok or got != expected:
        return None, [*notes, unwritten_note(todo)], 0
    return new, [*notes, *done], len(edits)


def _hits(
    fmt: Format,
    text: str,
    old: str,
    values: Sequence[str],
    want: Any,
    budget: Budget,
) -> tuple[list[Edit], str]:
    """The edits of the tokens spelling ``old`` whose re-read text is what is wanted."""
    tokens = fmt.tokens(text, old)
    if not tokens:
        return [], f"no string in the file spells `{old}` exactly"
    if len(tokens) > MAX_CANDIDATES:
        return [], f"{len(tokens)} strings spell `{old}`; too many to try"
    if not budget.take(len(tokens)):
        return [], OVER_BUDGET
    hits: list[Edit] = []
    styles: list[str] = []
    for token in tokens:
        new = fmt.encode(text, token, values)
        if new is None:
            styles.append(token.style)
            continue
        ok, got = _view(fmt, text[: token.start] + new + text[token.end :])
        if ok and got == want:
            hits.append(Edit(token.start, token.end, new))
    if not hits and styles:
        return [], f"a {styles[0]} cannot hold the pinned argument"
    if not hits:
        return [], "no span of the file re-reads as the pinned launch"
    if len(hits) > 1:
        return [], f"{len(hits)} spans would each pin it (one is needed)"
    return hits, ""
