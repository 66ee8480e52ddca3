"""A small Dockerfile parser for platforms without the ``dockerfile`` package's wheel.

It follows BuildKit's rules for what the rules here need: parser directives
(``# escape=``), line continuations (comment and blank lines inside a continuation are
dropped), heredocs on RUN/COPY/ADD (``<<EOF``, ``<<-EOF``, quoted delimiters), the JSON
(exec) form, leading ``--flags``, and the ENV forms (``ENV k=v ...`` and ``ENV k v``).
It returns the same :class:`Instruction` records as the BuildKit-backed path.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Instruction:
    cmd: str  # upper case
    flags: tuple[str, ...]
    args: tuple[str, ...]
    original: str
    start_line: int
    end_line: int
    heredocs: tuple[str, ...] = ()
    json: bool = False


_DIRECTIVE = re.compile(r"^#\s*([a-zA-Z][a-zA-Z0-9]*)\s*=\s*(.+?)\s*$")
_HEREDOC = re.compile(r"<<(-?)\s*([\"']?)([A-Za-z_][A-Za-z0-9_]*)\2")
_FLAGGED = {"RUN", "COPY", "ADD", "FROM", "HEALTHCHECK"}
_HEREDOC_CMDS = {"RUN", "COPY", "ADD"}


def _escape_char(lines: list[str]) -> str:
    for line in lines:
        m = _DIRECTIVE.match(line.strip())
        if not m:
            break
        if m.group(1).lower() == "escape" and m.group(2) in ("\\", "`"):
            return m.group(2)
    return "\\"


def _split_words(text: str) -> list[str]:
    """Whitespace-separated words; quotes are kept and protect spaces (like BuildKit)."""
    words: list[str] = []
    buf: list[str] = []
    quote: str | None = None
    i = 0
    while i < len(text):
        ch = text[i]
        if quote:
            buf.append(ch)
            if ch == "\\" and quote == '"' and i + 1 < len(text):
                buf.append(text[i + 1])
                i += 1
            elif ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
            buf.append(ch)
        elif ch.isspace():
            if buf:
                words.append("".join(buf))
                buf = []
        else:
            buf.append(ch)
        i += 1
    if buf:
        words.append("".join(buf))
    return words


def _env_args(rest: str) -> tuple[str, ...]:
    words = _split_words(rest)
    if words and "=" not in words[0]:
        # legacy form: ENV key value with spaces
        name, _, value = rest.strip().partition(" ")
        return (name, value.strip())
    out: list[str] = []
    for w in words:
        k, _, v = w.partition("=")
        out.extend([k, v])
    return tuple(out)


def _args_for(cmd: str, rest: str) -> tuple[tuple[str, ...], tuple[str, ...], bool]:
    """(flags, args, json) for one instruction's text after the keyword."""
    flags: list[str] = []
    if cmd in _FLAGGED:
        while True:
            m = re.match(r"\s*(--[A-Za-z][A-Za-z0-9-]*(?:=(?:\"[^\"]*\"|\S)*)?)", rest)
            if not m:
                break
            flags.append(m.group(1))
            rest = rest[m.end() :]
    rest = rest.strip()
    if cmd in ("ENV",):
        return tuple(flags), _env_args(rest), False
    if rest.startswith("["):
        try:
            value = json.loads(rest)
        except ValueError:
            value = None
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return tuple(flags), tuple(value), True
    if cmd in ("RUN", "CMD", "ENTRYPOINT", "SHELL"):
        return tuple(flags), ((rest,) if rest else ()), False
    return tuple(flags), tuple(_split_words(rest)), False


def parse_fallback(text: str) -> list[Instruction]:
    """Instructions of ``text`` (raises ValueError when it has none)."""
    lines = text.splitlines()
    escape = _escape_char(lines)
    out: list[Instruction] = []
    i = 0
    n = len(lines)
    while i < n:
        raw = lines[i]
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            i += 1
            continue
        start = i + 1
        parts: list[str] = []
        line = raw
        while True:
            body = line.rstrip()
            if body.endswith(escape) and not body.endswith(escape * 2):
                parts.append(body[:-1])
                i += 1
                while i < n and (not lines[i].strip() or lines[i].strip().startswith("#")):
                    i += 1
                if i >= n:
                    break
                line = lines[i]
                continue
            parts.append(body)
            break
        logical = "".join(parts).strip()  # BuildKit keeps the next line's indentation
        keyword, _, rest = logical.partition(" ")
        cmd = keyword.upper()
        heredocs: list[str] = []
        original = logical
        if cmd in _HEREDOC_CMDS:
            for m in _HEREDOC.finditer(rest):
                strip_tabs, name = m.group(1) == "-", m.group(3)
                body_lines: list[str] = []
                i += 1
                while i < n and (lines[i].lstrip("\t") if strip_tabs else lines[i]) != name:
                    body_lines.append(lines[i])
                    i += 1
                heredocs.append("".join(f"{b}\n" for b in body_lines))
                original += "\n" + "".join(f"{b}\n" for b in body_lines) + name + "\n"
        end = min(i + 1, n)
        flags, args, is_json = _args_for(cmd, rest)
        out.append(Instruction(cmd, flags, args, original, start, end, tuple(heredocs), is_json))
        i += 1
    if not out:
        raise ValueError("file with no instructions")
    return out
