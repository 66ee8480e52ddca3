"""Python agent code for ``--write-launch``: ``StdioServerParameters(command="npx",
args=["-y", "pkg"])``-style calls and ``{"command": ..., "args": [...]}`` mappings, at the
line the reader found them on.

Only a string literal that is the launch's argument itself is edited, in its own quotes
and prefix: an argument the reader worked out (an f-string, a concatenation, a variable,
a call, a list built elsewhere) is named in the notes with the reason. The edited source
is parsed again and must be the original's syntax tree with exactly those list items
replaced."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Sequence
from dataclasses import dataclass

from agentguard.facts.agents import McpServer
from agentguard.harden.launch_edit import (
    OVER_BUDGET,
    Budget,
    Edit,
    Todo,
    apply,
    done_note,
    pinned_args,
    refused_note,
    unwritten_note,
)
from agentguard.inspect.project.lined import PARSE_FAILURES
from agentguard.inspect.project.python_imports import IMPORTED_DECLARATION

_FAILS: tuple[type[BaseException], ...] = (SyntaxError, *PARSE_FAILURES)
_TOKEN_FAILS: tuple[type[BaseException], ...] = (tokenize.TokenError, *_FAILS)
_PREFIX = re.compile(r"^([rRuU]?)('''|\"\"\"|'|\")")
_KINDS: tuple[tuple[type[ast.AST], str], ...] = (
    (ast.JoinedStr, "the argument is an f-string"),
    (ast.BinOp, "the argument is a concatenation"),
    (ast.Name, "the argument is a variable"),
    (ast.Attribute, "the argument is a variable"),
)


@dataclass(frozen=True)
class _Target:
    list_at: int  # the args list's index in ast.walk order
    index: int
    values: tuple[str, ...]


def _encoding_problem(text: str) -> str | None:
    """Why the file's ``# coding:`` declaration makes its bytes another text than the one
    read as UTF-8 (None: the same text). This module reads the source as UTF-8,
    and Python (the reader, the interpreter) by its declaration: under ``utf-7`` the same
    bytes hold other strings and comments, so an edit checked here is not checked at all."""
    data = text.encode("utf-8")
    try:
        found, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        same = data.decode(found) == text
    except (SyntaxError, LookupError, UnicodeDecodeError):
        return "the file declares an encoding its bytes do not read in"
    return (
        None if same else f"the file declares the encoding {found}; only UTF-8 source is rewritten"
    )


def _parse(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except _FAILS:
        return None


def _lines(text: str) -> list[str]:
    """The source's lines as Python counts them (``\n``, ``\r\n`` or ``\r``; never the
    other breaks ``str.splitlines`` knows, which a hostile file may hold in a comment)."""
    return io.StringIO(text, newline="").readlines()


@dataclass
class _Source:
    """The source read once for all its launches (a file of many launches is walked and
    split into lines once, not once per launch): its lines, where each starts, and the
    server definitions on each line with their walk index."""

    text: str
    tree: ast.Module
    lines: list[str]
    starts: list[int]
    on_line: dict[int, list[tuple[ast.AST, int]]]  # line -> (definition, args' walk index)
    names: dict[int, str]  # id of a mapping -> the key it is the value of


def _source(text: str, tree: ast.Module) -> _Source:
    lines = _lines(text)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    nodes = list(ast.walk(tree))
    index = {id(n): i for i, n in enumerate(nodes)}
    on_line: dict[int, list[tuple[ast.AST, int]]] = {}
    names: dict[int, str] = {}
    for node in nodes:
        if isinstance(node, ast.Dict):
            for k, v in zip(node.keys, node.values, strict=True):
                if (
                    isinstance(k, ast.Constant)
                    and isinstance(k.value, str)
                    and isinstance(v, ast.Dict)
                ):
                    names[id(v)] = k.value
        got = _args_of(node)
        at = getattr(node, "lineno", None)
        if got is not None and got[1] is not None and isinstance(at, int):
            on_line.setdefault(at, []).append((node, index[id(got[1])]))
    return _Source(text, tree, lines, starts, on_line, names)


def _span(src: _Source, node: ast.expr) -> tuple[int, int]:
    lines, starts = src.lines, src.starts
    end_line = node.end_lineno or node.lineno
    end_col = node.end_col_offset or 0

    def at(line: int, col: int) -> int:  # ast columns count UTF-8 bytes
        return starts[line - 1] + len(lines[line - 1].encode("utf-8")[:col].decode("utf-8"))

    return at(node.lineno, node.col_offset), at(end_line, end_col)


def _args_of(node: ast.AST) -> tuple[ast.expr | None, ast.expr | None] | None:
    """(command, args) of a server call or mapping; None when ``node`` is neither."""
    if isinstance(node, ast.Call):
        kws = {kw.arg: kw.value for kw in node.keywords if kw.arg}
        if "command" in kws and "args" in kws:
            return kws["command"], kws["args"]
    if isinstance(node, ast.Dict):
        pairs = {
            k.value: v
            for k, v in zip(node.keys, node.values, strict=True)
            if isinstance(k, ast.Constant) and isinstance(k.value, str)
        }
        if "command" in pairs and "args" in pairs:
            return pairs["command"], pairs["args"]
    return None


def _literal(src: _Source, node: ast.Constant) -> tuple[int, int, str, str] | str:
    """The span and quote (prefix included) of a one-token string literal, or why not."""
    start, end = _span(src, node)
    segment = src.text[start:end]
    try:
        kinds = [
            t.type
            for t in tokenize.generate_tokens(io.StringIO(segment).readline)
            if t.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.ENDMARKER, tokenize.COMMENT)
        ]
    except _TOKEN_FAILS:
        return "the argument's source could not be read"
    m = _PREFIX.match(segment)
    if kinds != [tokenize.STRING] or m is None:
        return "the argument is a concatenation of literals"
    return start, end, m.group(1), m.group(2)


def _encode(prefix: str, quote: str, values: Sequence[str]) -> str | None:
    out: list[str] = []
    for v in values:
        if any(ord(c) < 0x20 or c == "\x7f" for c in v):
            return None
        if prefix.lower() == "r":
            if "\\" in v or quote[0] in v:
                return None
            body = v
        else:
            body = v.replace("\\", "\\\\").replace(quote[0], "\\" + quote[0])
        out.append(f"{prefix}{quote}{body}{quote}")
    return ", ".join(out)


def _may_be(
    node: ast.AST,
    command: ast.expr | None,
    args: ast.expr | None,
    names: dict[int, str],
    server: McpServer,
) -> bool:
    """Whether a definition may be ``server`` as the reader read it: its name (the key it
    is the value of, as the reader names mappings), and every literal of its command and
    arguments, equal to the reader's. What is not a literal may evaluate to anything, so it
    does not rule the definition out."""
    if names.get(id(node), "(unnamed)") != server.name:
        return False
    if isinstance(command, ast.Constant) and command.value != server.command:
        return False
    if not isinstance(args, ast.List | ast.Tuple) or not isinstance(server.args, tuple):
        return True
    if any(isinstance(e, ast.Starred) for e in args.elts):
        return True
    return len(args.elts) == len(server.args) and all(
        not isinstance(e, ast.Constant) or e.value == want
        for e, want in zip(args.elts, server.args, strict=True)
    )


def _locate(src: _Source, server: McpServer) -> list[tuple[int, ast.expr]]:
    """The args nodes (with their walk index) of the definitions on the server's line
    that may be this server (:func:`_may_be`): a definition that is not is never edited."""
    found: list[tuple[int, ast.expr]] = []
    for node, at in src.on_line.get(server.line, []):
        got = _args_of(node)
        if got is not None and got[1] is not None and _may_be(node, *got, src.names, server):
            found.append((at, got[1]))
    return found


def _one(src: _Source, todo: Todo) -> tuple[Edit, _Target] | str:
    launch, pin, server = todo
    if server.declared_in.endswith(IMPORTED_DECLARATION):
        # its path and line are where the imported name is used, not where it is written
        return "the server is defined in another module"
    found = _locate(src, server)
    if len(found) != 1:
        return f"{len(found)} server definitions on that line (one is needed)"
    at, args = found[0]
    if not isinstance(args, ast.List | ast.Tuple):
        return "the arguments are not a list written there"
    elts = args.elts[: launch.operand + 1]
    if len(elts) <= launch.operand or any(isinstance(e, ast.Starred) for e in elts):
        return "the arguments are built with `*`"
    item = elts[launch.operand]
    for kind, why in _KINDS:
        if isinstance(item, kind):
            return why
    if not isinstance(item, ast.Constant) or item.value != launch.spec:
        return "the argument is not a string written there"
    lit = _literal(src, item)
    if isinstance(lit, str):
        return lit
    start, end, prefix, quote = lit
    values = pinned_args(launch, pin)
    new = _encode(prefix, quote, values)
    if new is None:
        return "its quotes cannot hold the pinned argument"
    return Edit(start, end, new), _Target(at, launch.operand, tuple(values))


def _expected(text: str, targets: Sequence[_Target]) -> str | None:
    tree = _parse(text)
    if tree is None:
        return None
    nodes = list(ast.walk(tree))
    for t in sorted(targets, key=lambda t: t.index, reverse=True):
        node = nodes[t.list_at]
        assert isinstance(node, ast.List | ast.Tuple)
        kind = getattr(node.elts[t.index], "kind", None)
        node.elts[t.index : t.index + 1] = [ast.Constant(v, kind=kind) for v in t.values]
    return ast.dump(tree)


def plan_python(text: str, todo: Sequence[Todo]) -> tuple[str | None, list[str], int]:
    """The edited source (None: nothing to write), the notes, how many launches it pins."""
    why = _encoding_problem(text)
    if why is not None:
        return None, [refused_note(x, p, why) for x, p, _ in todo], 0
    tree = _parse(text)
    if tree is None:
        return None, [refused_note(x, p, "the Python file cannot be parsed") for x, p, _ in todo], 0
    src = _source(text, tree)
    edits: list[Edit] = []
    targets: list[_Target] = []
    notes: list[str] = []
    done: list[str] = []
    budget = Budget(text)
    budget.take(2)  # the check of every edit at once
    for item in todo:
        got = _one(src, item) if budget.take(2) else OVER_BUDGET
        if isinstance(got, str):
            notes.append(refused_note(item[0], item[1], got))
            continue
        edit, target = got
        alone = apply(text, [edit])
        parsed = None if alone is None else _parse(alone)
        if parsed is None or ast.dump(parsed) != _expected(text, [target]):
            notes.append(
                refused_note(item[0], item[1], "the edit did not re-read as the pinned launch")
            )
            continue
        edits.append(edit)
        targets.append(target)
        done.append(done_note(item[0], item[1]))
    if not edits:
        return None, notes, 0
    new = apply(text, edits)
    parsed = None if new is None else _parse(new)
    if parsed is None or ast.dump(parsed) != _expected(text, targets):
        return None, [*notes, unwritten_note(todo)], 0
    return new, [*notes, *done], len(edits)
