"""Here-documents in shell text (``cat > f << 'EOF'`` ... ``EOF``), with the file line of
each body line: the scanner the MCP configuration readers of run steps, Dockerfiles and
scripts share (:mod:`.heredoc_servers`).

Read the way the shell reads them: an operator ``<<`` (``<<-`` strips leading tabs; ``<<<``
is a here-string, not one) where the shell reads commands (:mod:`.shell_lexer`: not in
quotes, comments or arithmetic, carried across lines; ``\\`` continuation lines are one
line), then the delimiter word; quoting
any part of it (``'EOF'``, ``"EOF"``, ``\\EOF``) means the body is not expanded. The bodies
of the operators on one line follow that line in order, each up to a line that is exactly
its delimiter. An unterminated body runs to the end of the text (the shell does the same,
with a warning): it is kept, marked. A body is itself shell text when a shell reads it
(``bash << EOF``), so bodies are scanned again, to :data:`MAX_NESTING` levels; a deeper
body that holds ``<<`` is marked, never silently left unread."""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from agentguard.inspect.project.shell_lexer import MAX_HEREDOCS as MAX_HEREDOCS
from agentguard.inspect.project.shell_lexer import Lexer, Opening

MAX_NESTING = 4  # heredocs inside heredoc bodies, read this deep
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
    too_deep: bool = False  # a body past the nesting cap that may hold here-documents

    @property
    def text(self) -> str:
        return "".join(f"{t}\n" for _, t in self.body)


def heredocs(
    lines: Sequence[Line], depth: int = 0, shell: Callable[[str], str] | None = None
) -> Iterator[Heredoc]:
    """Every here-document of the shell text ``lines``, and those inside their bodies. A
    body at :data:`MAX_NESTING` that holds ``<<`` is not read again: it is marked
    ``too_deep``, so that a caller says so instead of reading nothing. ``shell``: what is
    done to a line before the shell reads it (a workflow's expressions replaced), applied
    to the lines read as commands, never to bodies."""
    lexer = Lexer()
    read = shell or str
    pending: list[tuple[Opening, int, str | None]] = []
    i = 0
    while i < len(lines):
        number, text = lines[i][0], read(lines[i][1])
        i += 1
        before = list(lexer.stack)
        ops, continued = lexer.line(text)
        if continued and i < len(lines):  # `\` newline: one line with the next, read again whole
            parts = [text[:-1]]
            while continued and i < len(lines):
                more = read(lines[i][1])
                _, continued = lexer.line(more)
                parts.append(more[:-1] if continued else more)
                i += 1
            if continued:  # (the text's last line ends in `\`: kept)
                parts[-1] += "\\"
            text = "".join(parts)
            lexer.stack = before
            ops, _ = lexer.line(text)
        seen: set[int] = set()
        seps = [k for k, c in enumerate(text) if c in ";&|"] if ops else []
        for op in ops:
            start, end = _command(op.at, seps, len(text))
            target = None if start in seen else _target(text, start, end)
            pending.append((op, number, target))
            seen.add(start)  # a second body of one command: where it goes is not read
        if not pending or not lexer.reads_commands:
            continue  # inside a quote the newline is text: the bodies start after it closes
        for op, opened_at, where in pending:
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
            deep = depth + 1 >= MAX_NESTING
            too_deep = deep and any("<<" in t for _, t in body)
            yield Heredoc(
                op.delimiter, op.quoted, opened_at, tuple(body), terminated, where, depth, too_deep
            )
            if not deep and body:
                yield from heredocs(body, depth + 1, shell)
        pending = []


def _command(at: int, seps: list[int], length: int) -> tuple[int, int]:
    """The span of the command holding the ``<<`` at ``at``: ``seps`` are where its line has
    ``;``, ``&`` or ``|``, in order (``echo x >/dev/null; cat > f <<EOF`` writes ``f``)."""
    k = bisect.bisect_left(seps, at)
    return (seps[k - 1] + 1 if k else 0), (seps[k] if k < len(seps) else length)


def _target(line: str, start: int, end: int) -> str | None:
    m = _TARGET.search(line, start, end)
    return m.group(2) if m else None


def text_lines(text: str, first: int = 1) -> list[Line]:
    """``text`` as numbered lines, the first numbered ``first``."""
    return [(first + k, t.removesuffix("\r")) for k, t in enumerate(text.split("\n"))]
