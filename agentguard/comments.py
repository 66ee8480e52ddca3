"""Where a file's real comments are: the lines an inline ``agentguard: ignore[...]`` may stand
on (:mod:`agentguard.policy`).

A suppression counts only inside a comment of the file's own language, found by that
language's tokenizer: a string value ``"// agentguard: ignore[AG305]"`` in a settings file,
a ``#`` in a YAML block scalar or a Python docstring is data, not a comment.

- Python: :mod:`tokenize` (``COMMENT`` tokens);
- YAML: PyYAML's scanner (a ``#`` outside every token it reads);
- TOML, shell, requirements, ``.env``: ``#`` outside a quoted string;
- JSON/JSONC: ``//`` and ``/* */`` outside a string;
- JavaScript/TypeScript: tree-sitter's ``comment`` nodes;
- Dockerfile: a line whose first non-blank character is ``#``;
- anything else: a whole line starting with ``#`` or ``//`` only.

A file its tokenizer cannot read has no comments (its suppressions do not count: a
finding is never hidden by text agentguard could not place). Pure: text in, comments out.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any


@dataclass(frozen=True)
class Comment:
    line: int  # 1-based
    text: str  # the comment's text on that line (its marker included)
    whole_line: bool  # nothing but blanks before it on its line


def comments(name: str, text: str) -> dict[int, Comment]:
    """Line -> the comment on it, for a file called ``name`` holding ``text``."""
    kind = _kind(name)
    lines = text.splitlines()
    try:
        found = list(_READERS[kind](text))
    except (SyntaxError, ValueError, RecursionError, UnicodeError, tokenize.TokenError):
        return {}
    except Exception as exc:  # a scanner's own error type (yaml.YAMLError)
        if type(exc).__module__.startswith("yaml"):
            return {}
        raise
    out: dict[int, Comment] = {}
    for line, col, body in found:
        if not 1 <= line <= len(lines):
            continue
        whole = not lines[line - 1][:col].strip()
        if line in out:  # (a ``/* */`` and a ``//`` on one line: keep both texts)
            body = out[line].text + " " + body
            whole = out[line].whole_line
        out[line] = Comment(line, body, whole)
    return out


def _kind(name: str) -> str:
    base = PurePosixPath(name.replace("\\", "/")).name.lower()
    suffix = PurePosixPath(base).suffix
    if suffix in (".py", ".pyi"):
        return "python"
    if suffix in (".yml", ".yaml"):
        return "yaml"
    if suffix in (".json", ".jsonc", ".json5") or base in (".mcp.json", "devcontainer.json"):
        return "json"
    if suffix in (".js", ".mjs", ".cjs"):
        return "js"
    if suffix in (".ts", ".mts", ".cts"):
        return "ts"
    if suffix in (".tsx", ".jsx"):
        return "tsx"
    if base == "dockerfile" or base.startswith("dockerfile.") or suffix == ".dockerfile":
        return "dockerfile"
    if base.startswith("containerfile"):
        return "dockerfile"
    if suffix in (".toml", ".sh", ".bash", ".txt", ".in", ".cfg", ".ini", ".env") or base in (
        ".env",
        "requirements.lock",
    ):
        return "hash"
    return "other"


Found = Iterator[tuple[int, int, str]]  # (line, column, text)


def _python(text: str) -> Found:
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.COMMENT:
            yield tok.start[0], tok.start[1], tok.string


def _yaml(text: str) -> Found:
    """A ``#`` is a comment when no token the scanner read covers it, and it starts the line
    or follows a blank (YAML's own rule)."""
    import yaml

    loader_cls = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    loader = loader_cls(text)
    covered: list[tuple[int, int]] = []
    try:
        while True:
            tok = loader.get_token()
            if tok is None:
                break
            if isinstance(tok, yaml.ScalarToken):
                covered.append((tok.start_mark.index, tok.end_mark.index))
    finally:
        loader.dispose()
    starts = _line_starts(text)
    spans = sorted(covered)
    for m in re.finditer(r"(?:(?<=[ \t])|(?<=^))#", text, re.MULTILINE):
        at = m.start()
        if _inside(spans, at):
            continue
        line = _line_of(starts, at)
        end = text.find("\n", at)
        yield line, at - starts[line - 1], text[at : end if end >= 0 else len(text)]


def _inside(spans: list[tuple[int, int]], at: int) -> bool:
    import bisect

    i = bisect.bisect_right(spans, (at, 1 << 62)) - 1
    return i >= 0 and spans[i][0] <= at < spans[i][1]


def _line_starts(text: str) -> list[int]:
    return [0, *(m.end() for m in re.finditer(r"\r\n|\r|\n", text))]


def _line_of(starts: list[int], at: int) -> int:
    import bisect

    return bisect.bisect_right(starts, at)


def _hash(text: str) -> Found:
    """``#`` outside a single- or double-quoted string (TOML's multi-line strings too)."""
    yield from _lex(text, line_marks=("#",), block=None, quotes=("'", '"'))


def _json(text: str) -> Found:
    return _lex(text, line_marks=("//",), block=("/*", "*/"), quotes=('"',))


def _lex(
    text: str,
    *,
    line_marks: tuple[str, ...],
    block: tuple[str, str] | None,
    quotes: tuple[str, ...],
) -> Found:
    """A small lexer of strings and comments: what is inside a string is never a comment."""
    starts = _line_starts(text)
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch in quotes:
            triple = text.startswith(ch * 3, i)
            close = ch * 3 if triple else ch
            j = i + len(close)
            while j < n:
                if text[j] == "\\" and ch == '"':
                    j += 2
                    continue
                if text.startswith(close, j):
                    break
                if not triple and text[j] in "\r\n":
                    break  # an unclosed one-line string ends at its line
                j += 1
            i = j + len(close)
            continue
        if block is not None and text.startswith(block[0], i):
            end = text.find(block[1], i + 2)
            stop = n if end < 0 else end + len(block[1])
            at = i
            for part in re.split(r"(\r\n|\r|\n)", text[i:stop]):
                if part in ("\r\n", "\r", "\n"):
                    at += len(part)
                    continue
                line = _line_of(starts, at)
                if part:
                    yield line, at - starts[line - 1], part
                at += len(part)
            i = stop
            continue
        mark = next((m for m in line_marks if text.startswith(m, i)), None)
        if mark is not None:
            end = i
            while end < n and text[end] not in "\r\n":
                end += 1
            line = _line_of(starts, i)
            yield line, i - starts[line - 1], text[i:end]
            i = end
            continue
        i += 1


def _dockerfile(text: str) -> Found:
    for no, line in enumerate(text.splitlines(), 1):
        stripped = line.lstrip()
        if stripped.startswith("#"):
            yield no, len(line) - len(stripped), stripped


def _other(text: str) -> Found:
    for no, line in enumerate(text.splitlines(), 1):
        stripped = line.lstrip()
        if stripped.startswith(("#", "//")):
            yield no, len(line) - len(stripped), stripped


def _script(text: str, key: str) -> Found:
    from tree_sitter import Language, Parser

    if key not in _LANGUAGES:
        import tree_sitter_javascript as tsj
        import tree_sitter_typescript as tst

        raw = {"ts": tst.language_typescript, "tsx": tst.language_tsx, "js": tsj.language}[key]
        _LANGUAGES[key] = Language(raw())
    lang = _LANGUAGES[key]
    data = text.encode("utf-8", "surrogatepass")
    tree = Parser(lang).parse(data)
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type == "comment":
            body = data[node.start_byte : node.end_byte].decode("utf-8", "replace")
            row, col = node.start_point
            for k, part in enumerate(body.splitlines()):
                if k == 0:
                    yield row + 1, _chars(data, node.start_byte, col), part
                else:
                    yield row + 1 + k, len(part) - len(part.lstrip()), part.lstrip()
            continue
        stack.extend(node.children)


_LANGUAGES: dict[str, Any] = {}


def _chars(data: bytes, start_byte: int, col_bytes: int) -> int:
    """The column in characters of a node starting ``col_bytes`` bytes into its line."""
    return len(data[start_byte - col_bytes : start_byte].decode("utf-8", "replace"))


_READERS = {
    "python": _python,
    "yaml": _yaml,
    "json": _json,
    "js": lambda t: _script(t, "js"),
    "ts": lambda t: _script(t, "ts"),
    "tsx": lambda t: _script(t, "tsx"),
    "dockerfile": _dockerfile,
    "hash": _hash,
    "other": _other,
}
