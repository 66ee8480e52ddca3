"""Here-documents in shell text (``cat > f << 'EOF'`` ... ``EOF``), with the file line of
each body line: the scanner the MCP configuration readers of run steps, Dockerfiles and
scripts share (:mod:`.heredoc_servers`).

Read the way the shell reads them: an operator ``<<`` (``<<-`` strips leading tabs; ``<<<``
is a here-string, not one) outside quotes and comments, then the delimiter word; quoting
any part of it (``'EOF'``, ``"EOF"``, ``\\EOF``) means the body is not expanded. The bodies
of the operators on one line follow that line in order, each up to a line that is exactly
its delimiter. An unterminated body runs to the end of the text (the shell does the same,
with a warning): it is kept, marked. A body is itself shell text when a shell reads it
(``bash << EOF``), so bodies are scanned again, to :data:`MAX_NESTING` levels."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

MAX_NESTING = 4  # heredocs inside heredoc bodies, read this deep
MAX_HEREDOCS = 500  # read per text by the callers: a generated file of a million `<<` stops
_WORD_END = re.compile(r"[\s;&|()<>]")
# `cat > FILE <<EOF`, `tee FILE <<EOF`: where the body goes, when the line says so plainly
_TARGET = re.compile(r"(?:>>?|\btee(?:\s+-a)?)\s*(['\"]?)([^\s'\";&|()<>]+)\1")

Line = tuple[int, str]  # (1-based line in the file, text)


@dataclass(frozen=True)
class Heredoc:
    """One here-document: ``opened_at`` is the line of its ``<<``; ``body`` the body lines
    with their file lines; ``quoted``: the delimiter was quoted (no expansion);
    ``target``: the file the opening line writes it to, when written out plainly."""

    delimiter: str
    quoted: bool
    opened_at: int
    body: tuple[Line, ...]
    terminated: bool
    target: str | None
    depth: int = 0

    @property
    def text(self) -> str:
        return "".join(f"{t}\n" for _, t in self.body)


@dataclass(frozen=True)
class _Opening:
    delimiter: str
    quoted: bool
    strip_tabs: bool


def _delimiter(line: str, at: int) -> tuple[str, bool, int] | None:
    """The delimiter word starting at ``at`` (after blanks): (word, quoted, end)."""
    i = at
    while i < len(line) and line[i] in " \t":
        i += 1
    word: list[str] = []
    quoted = False
    while i < len(line) and not _WORD_END.match(line[i]):
        c = line[i]
        if c in "'\"":
            end = line.find(c, i + 1)
            if end < 0:
                return None
            word.append(line[i + 1 : end])
            quoted = True
            i = end + 1
        elif c == "\\" and i + 1 < len(line):
            word.append(line[i + 1])
            quoted = True
            i += 2
        else:
            word.append(c)
            i += 1
    text = "".join(word)
    return (text, quoted, i) if text else None


def openings(line: str) -> list[_Opening]:
    """The heredoc operators of one shell line, in order (quotes and comments skipped)."""
    out: list[_Opening] = []
    i, quote = 0, ""
    while i < len(line):
        c = line[i]
        if quote:
            if c == "\\" and quote == '"':
                i += 2
                continue
            if c == quote:
                quote = ""
            i += 1
            continue
        if c in "'\"":
            quote = c
        elif c == "\\":
            i += 1
        elif c == "#" and (i == 0 or line[i - 1] in " \t;&|("):
            break  # a comment: nothing after it is an operator
        elif line.startswith("<<<", i):  # a here-string: its word is the input
            i += 3
            continue
        elif line.startswith("<<", i):
            strip = line.startswith("<<-", i)
            got = _delimiter(line, i + (3 if strip else 2))
            if got is not None:
                word, quoted, end = got
                out.append(_Opening(word, quoted, strip))
                i = end
                continue
        i += 1
    return out


def heredocs(lines: Sequence[Line], depth: int = 0) -> Iterator[Heredoc]:
    """Every here-document of the shell text ``lines``, and those inside their bodies."""
    i = 0
    while i < len(lines):
        number, text = lines[i]
        pending = openings(text)
        i += 1
        target = _target(text)
        for op in pending:
            body: list[Line] = []
            terminated = False
            while i < len(lines):
                n, t = lines[i]
                i += 1
                if op.strip_tabs:
                    t = t.lstrip("\t")
                if t == op.delimiter:  # exactly the word: `EOF ` does not end it
                    terminated = True
                    break
                body.append((n, t))
            doc = Heredoc(op.delimiter, op.quoted, number, tuple(body), terminated, target, depth)
            yield doc
            if depth + 1 < MAX_NESTING and body:
                yield from heredocs(body, depth + 1)
            target = None  # a second body on the line: where it goes is not read


def _target(line: str) -> str | None:
    m = _TARGET.search(line)
    return m.group(2) if m else None


def text_lines(text: str, first: int = 1) -> list[Line]:
    """``text`` as numbered lines, the first numbered ``first``."""
    return [(first + k, t.removesuffix("\r")) for k, t in enumerate(text.split("\n"))]
