"""Tools handed to the model through an LLM API's own tool types, outside any agent SDK.

A loop that passes Anthropic's client tools (``{"type": "bash_20250124", ...}``,
``text_editor_*``, ``computer_*``) or OpenAI's (``local_shell``, ``computer_use_preview``)
to the model runs whatever the model asks for in the caller's own process: the code around
the call executes the command, edits the file or drives the screen. Server tools that the
provider runs on its side (``code_execution_*``, ``web_search_*``, ``web_fetch_*``) are
read too, marked hosted. Only dict literals handed to the model are read: inside a
``tools=`` argument, or in a list bound to a name whose head word is ``tools`` (``TOOLS =
[...]``, ``tools.append({...})``), in a file that imports the ``anthropic`` or ``openai``
client. A library that maps or converts tool types (an SDK's own request builder, returning
``{"type": "computer_use_preview", ...}``) hands nothing to a model itself.
"""

from __future__ import annotations

import ast
import re
import warnings
from collections.abc import Callable

from agentguard.inspect.project.model import ToolGrant
from agentguard.inspect.project.python_fallback import head_word
from agentguard.inspect.project.python_import_needles import BLANKS, gap_start, may_import
from agentguard.inspect.project.python_scope import ModuleIndex

# tool type -> (category, what it lets the model do, provider-hosted)
_TYPES: tuple[tuple[re.Pattern[str], str, str, str, bool], ...] = (
    (
        re.compile(r"bash_\d{8}"),
        "anthropic",
        "shell",
        "runs the shell commands the model writes, in this code's process",
        False,
    ),
    (
        re.compile(r"text_editor_\d{8}"),
        "anthropic",
        "file",
        "views and rewrites the files the model names",
        False,
    ),
    (
        re.compile(r"computer_\d{8}"),
        "anthropic",
        "shell",
        "lets the model drive this computer (keyboard, mouse, screen)",
        False,
    ),
    (
        re.compile(r"local_shell"),
        "openai",
        "shell",
        "runs the shell commands the model writes on this machine",
        False,
    ),
    (
        re.compile(r"computer_use(_preview)?"),
        "openai",
        "shell",
        "lets the model drive this computer (keyboard, mouse, screen)",
        False,
    ),
    (
        re.compile(r"code_execution_\d{8}"),
        "anthropic",
        "shell",
        "runs code the model writes in the provider's sandbox",
        True,
    ),
    (
        re.compile(r"web_search_\d{8}|web_fetch_\d{8}"),
        "anthropic",
        "web",
        "lets the model search and fetch the web",
        True,
    ),
)
# what a file must spell for the reader to find anything (the second-stage pre-filter)
NEEDLES: tuple[bytes, ...] = (
    b"bash_",
    b"text_editor_",
    b"computer_",
    b"local_shell",
    b"code_execution_",
    b"web_search_",
    b"web_fetch_",
)


# what a string literal that is a tool type holds, and what its first piece may hold when
# the rest is in strings after it (`"bash_2025" "0124"`)
_TYPE = re.compile("|".join(f"(?:{pattern.pattern})" for pattern, *_ in _TYPES))
_TYPE_START = re.compile(
    r"(?:bash|text_editor|computer|code_execution|web_search|web_fetch)_\d{0,8}"  # (any digit)
    r"|local_shell|computer_(?:u(?:s(?:e(?:_(?:p(?:r(?:e(?:v(?:i(?:e(?:w)?)?)?)?)?)?)?)?)?)?)?"
)
_NAME_BYTES = re.compile(rb"[A-Za-z0-9_\x80-\xff]*")  # (`\d` is any digit: `٢`, too)
# another string right after a closing quote: blanks, newlines, continuations, comments (a
# comment counts as "maybe" and is not read through: this is asked at every piece that may
# begin a tool type, and a line of them, each read to the line's end, is quadratic)
_NEXT_STRING = re.compile(BLANKS + rb"(?:[rRuUbBfFtT]{0,2}['\"]|#)")
_QUOTES = b"'\""
_CONTINUED = (b"\\\n", b"\\\r\n", b"\\\r")  # a backslash-newline inside a string: no character


def may_declare(data: bytes) -> bool:
    """False only when :func:`api_tool_grants` cannot find a grant in the file: it needs
    an import of ``anthropic`` or ``openai`` and a dict whose ``"type"`` is a string
    constant that is a tool type, so a string literal that begins with a tool type's name
    (after its quote, or a backslash-newline inside it) and ends where the type does (its
    closing quote), or goes on in a string after it, or holds a backslash there (an escape:
    read as a tool type), and that stands where a ``"type"`` key's value can
    (:func:`_after_type_key`)."""
    if _typed_string(data):
        return may_import(data, (b"anthropic", b"openai"))
    # (the pieces' scan is the slower: only in a file that imports a provider)
    return may_import(data, (b"anthropic", b"openai")) and _spelled_in_pieces(data)


def _typed_string(data: bytes) -> bool:
    for needle in NEEDLES:
        at = data.find(needle)
        while at >= 0:
            quote = data[at - 1] if at and data[at - 1] in _QUOTES else None
            if quote is not None or data.endswith(_CONTINUED, 0, at):
                end = _NAME_BYTES.match(data, at).end()  # type: ignore[union-attr]
                after = data[end] if end < len(data) else None
                # (a string continued from the line before: its start is not looked for)
                placed = quote is None or _after_type_key(data, at - 1)
                if after == 0x5C and placed:  # a backslash: an escape, or the string goes on
                    return True
                closes = (
                    after == quote if quote is not None else after is not None and after in _QUOTES
                )
                if closes and placed:
                    text = data[at:end].decode("utf-8", "replace")
                    if _TYPE.fullmatch(text) or (
                        _TYPE_START.fullmatch(text) and _NEXT_STRING.match(data, end + 1)
                    ):
                        return True
            at = data.find(needle, at + len(needle))
    return False


# a string piece that may begin a tool type where the test above sees no tool type's name
# after a quote: a proper prefix of a name, the rest in a string after it (`"ba" "sh_..."`),
# or name characters up to an escape that may spell one (`"\x62ash_..."`, `"bash\u005f..."`)
_PREFIXES = b"|".join(
    re.escape(p) for p in sorted({n[:i] for n in NEEDLES for i in range(1, len(n))}, key=len)[::-1]
)
_PIECE = re.compile(
    rb"(['\"])(?:(?:" + _PREFIXES + rb")(?=\1)|[A-Za-z0-9_\x80-\xff]*\\(?:[xuUN0-7]|\r|\n))"
)
_MAX_PIECES = 256
# what such a piece holds up to its closing quote when it is a tool type or a piece of one
_PIECE_BODY = re.compile(
    rb"(?:[A-Za-z0-9_\x80-\xff]|\\(?:x[0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}"
    rb"|N\{[A-Za-z0-9 \-]*\}|[0-7]{1,3}|\r\n|\r|\n))*"
)


def _spelled_in_pieces(data: bytes) -> bool:
    """Whether a string piece that :func:`_typed_string` does not read (a short first piece,
    an escape) decodes to a tool type, or to a start of one with a string after it."""
    decoded = 0
    for m in _PIECE.finditer(data):
        start = m.start() + 1
        end = _PIECE_BODY.match(data, start).end()  # type: ignore[union-attr]
        if end >= len(data) or data[end] != data[m.start()]:
            continue  # (another character: no tool type, nor a start of one)
        if not _after_type_key(data, m.start()):
            continue  # (no `"type"` key's value, nor a piece after an empty one)
        decoded += 1
        if decoded > _MAX_PIECES:
            return True  # (a file of escaped strings: parsed rather than each decoded)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                node = ast.parse(b'"' + data[start:end] + b'"', mode="eval").body
        except (SyntaxError, ValueError):
            return True  # (not decoded: may be one)
        value = node.value if isinstance(node, ast.Constant) else None
        if not isinstance(value, str):
            return True
        if _TYPE.fullmatch(value) or (
            (
                value == ""
                or any(n.startswith(value.encode()) for n in NEEDLES)
                or _TYPE_START.fullmatch(value)
            )
            and _NEXT_STRING.match(data, end + 1)
        ):
            return True
    return False


# What may stand between a `"type"` key and its value in a dict display: blanks, newlines,
# backslash continuations, and brackets around either (`("type"): ("bash_20250124")`); a
# comment may too, read below as "maybe". A piece before the value's own is searched for
# its opening quote this far back at most (past that: "maybe").
_PIECE_REACH = 128
_PREFIX_LETTERS = frozenset(b"rRuUbBfFtT")


def _after_type_key(data: bytes, quote: int) -> bool:
    """False only when the string literal whose opening quote is at ``quote`` cannot be,
    nor begin, the value of a ``"type"`` key in a dict display (the only place
    :func:`api_tool_grants` reads a tool type): right before it, past its prefix letters
    and the gap, stands a ``:`` whose key is a string that may end ``"type"`` (its last
    piece a suffix of ``type`` or holding a backslash); or the closing quote of a piece
    that may be empty (then an earlier piece is the value's start, and is asked about on
    its own when it is not empty). A comment in a gap: "maybe"."""
    i = quote
    while i > quote - 2 and i > 0 and data[i - 1] in _PREFIX_LETTERS:
        i -= 1
    i, commented = gap_start(data, i, b"(")  # `(`
    if commented:
        return True
    if i > 0 and data[i - 1] in _QUOTES:  # another string piece right before this one
        return _last_piece_may_be(data, i - 1, lambda piece: piece == b"")
    if i == 0 or data[i - 1] != 0x3A:  # `:`
        return False
    i, commented = gap_start(data, i - 1, b")")  # `)`
    if commented:
        return True
    if i == 0 or data[i - 1] not in _QUOTES:
        return False  # (a key that is no string constant: no `"type"`)
    return _last_piece_may_be(data, i - 1, b"type".endswith)


def _last_piece_may_be(data: bytes, closing: int, plain: Callable[[bytes], bool]) -> bool:
    """Whether the string piece whose closing quote is at ``closing`` may hold what
    ``plain`` accepts: its text back to the same quote before it (the opening one, or one
    inside the piece, escaped or in a triple-quoted string, so that the piece's value holds
    a quote: accepted by no test here) holds a backslash or is accepted; a piece longer
    than the search reaches: "maybe"."""
    opening = data.rfind(data[closing : closing + 1], max(0, closing - _PIECE_REACH), closing)
    if opening < 0:
        return True
    text = data[opening + 1 : closing]
    return b"\\" in text or plain(text)


def _tool_type(value: str) -> tuple[str, str, str, bool] | None:
    for pattern, provider, category, detail, hosted in _TYPES:
        if pattern.fullmatch(value):
            return provider, category, detail, hosted
    return None


def _declared(node: ast.Dict, roots: set[str]) -> bool:
    """A ``"type": "<tool type>"`` entry of a provider the file imports."""
    for key, value in zip(node.keys, node.values, strict=True):
        if (
            isinstance(key, ast.Constant)
            and key.value == "type"
            and isinstance(value, ast.Constant)
            and isinstance(value.value, str)
        ):
            found = _tool_type(value.value)
            if found is not None and found[0] in roots:
                return True
    return False


def _tools_name(node: ast.AST) -> bool:
    name = (
        node.id
        if isinstance(node, ast.Name)
        else node.attr
        if isinstance(node, ast.Attribute)
        else ""
    )
    return head_word(name) in ("tools", "tool")


def _dispatched(test: ast.AST) -> set[str]:
    """The strings an ``if`` test compares with (``tool_name == "local_shell"``,
    ``kind in ("bash_20250124", ...)``)."""
    out: set[str] = set()
    for node in ast.walk(test):
        if isinstance(node, ast.Compare):
            for side in (node.left, *node.comparators):
                for c in ast.walk(side):
                    if isinstance(c, ast.Constant) and isinstance(c.value, str):
                        out.add(c.value)
    return out


# nodes with nothing below them that could be a root or hold one
_LEAVES = frozenset(
    {ast.Name, ast.Constant, *ast.expr_context.__subclasses__(), *ast.operator.__subclasses__(),
     *ast.boolop.__subclasses__(), *ast.unaryop.__subclasses__(), *ast.cmpop.__subclasses__()}
)  # fmt: skip


def _handed_over(tree: ast.AST) -> list[tuple[ast.Dict, frozenset[str]]]:
    """Dict literals that reach a model's tool list: in a ``tools=`` argument, or in a value
    bound to (or appended to) a name whose head word is ``tools``; each with the strings the
    ``if`` tests around it compare with (a branch taken when a caller names that tool type
    forwards the caller's choice: a library's dispatch, not this code's grant)."""
    roots: list[tuple[ast.AST, frozenset[str]]] = []
    # every node in the order a recursive walk meets it (children in field order), with the
    # guards of the `if` bodies it stands in; leaves (names, constants, contexts) are not
    # pushed: nothing below them, and none of them is a root
    stack: list[tuple[ast.AST, frozenset[str]]] = [(tree, frozenset())]
    while stack:
        node, guards = stack.pop()
        kind = type(node)
        if kind is ast.Call:
            call: ast.Call = node  # type: ignore[assignment]
            roots.extend((kw.value, guards) for kw in call.keywords if kw.arg == "tools")
            func = call.func
            if (
                isinstance(func, ast.Attribute)
                and func.attr in ("append", "extend", "insert")
                and _tools_name(func.value)
            ):
                roots.extend((a, guards) for a in call.args)
        elif (kind is ast.Assign or kind is ast.AnnAssign) and node.value is not None:  # type: ignore[attr-defined]
            targets = node.targets if kind is ast.Assign else [node.target]  # type: ignore[attr-defined]
            if any(_tools_name(t) for t in targets):
                roots.append((node.value, guards))  # type: ignore[attr-defined]
        if kind is ast.If:
            branch: ast.If = node  # type: ignore[assignment]
            inner = guards | _dispatched(branch.test)
            later = [(s, inner) for s in branch.body] + [(s, guards) for s in branch.orelse]
            stack.extend(reversed(later))
            stack.append((branch.test, guards))
            continue
        children: list[tuple[ast.AST, frozenset[str]]] = []
        for field in node._fields:
            value = getattr(node, field, None)
            if type(value) is list:
                children.extend(
                    (v, guards) for v in value if type(v) not in _LEAVES and isinstance(v, ast.AST)
                )
            elif value is not None and type(value) not in _LEAVES and isinstance(value, ast.AST):
                children.append((value, guards))
        stack.extend(reversed(children))
    seen: dict[int, tuple[ast.Dict, frozenset[str]]] = {}
    for root, guards in roots:
        for sub in ast.walk(root):
            if isinstance(sub, ast.Dict):
                seen.setdefault(id(sub), (sub, guards))
    return list(seen.values())


def api_tool_grants(path: str, tree: ast.AST, index: ModuleIndex) -> list[ToolGrant]:
    roots = index.import_roots
    if not ({"anthropic", "openai"} & roots):
        return []
    if not any(_declared(node, roots) for node, _ in index.dicts):
        return []  # (the index holds every dict literal: no tool type, nothing handed over)
    out: list[ToolGrant] = []
    for node, guards in _handed_over(tree):
        for key, value in zip(node.keys, node.values, strict=True):
            if not (isinstance(key, ast.Constant) and key.value == "type"):
                continue
            if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
                continue
            found = _tool_type(value.value)
            if found is None or value.value in guards:
                continue  # (a branch taken when the caller names this type: its choice)
            provider, category, detail, hosted = found
            if provider not in roots:
                continue  # Anthropic's types in an OpenAI-only file name something else
            out.append(
                ToolGrant(
                    framework=f"{provider} API",
                    tool=value.value,
                    category=category,
                    path=path,
                    line=node.lineno,
                    detail=detail,
                    hosted=hosted,
                    mitigated="a server tool: it runs on the provider's side, not in this "
                    "process or its container"
                    if hosted
                    else None,
                )
            )
    return out
