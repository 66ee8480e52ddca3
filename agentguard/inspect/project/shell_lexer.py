"""Where a shell line has here-document operators: the part of the shell's own reading that
says whether a ``<<`` is an operator, carried from line to line.

A ``<<`` is an operator only where the shell reads commands: not inside quotes, a comment,
``$((...))`` or ``((...))`` arithmetic, or ``${...}``; but it is one inside a command
substitution, even a quoted one (``x="$(cat <<'EOF'`` is a here-document). Quotes, command
substitutions and ``case`` run across lines, so the state is kept from one line to the next
(``echo "a`` on one line, ``" ; cat <<EOF`` on the next is an operator). ``$'...'`` strings
end at an unescaped quote. Reading a ``<<`` where the shell would not only opens a body that
is read again as shell text (:mod:`.shell_heredocs`), so where this reading is unsure it takes
the operator: arithmetic is arithmetic only when it closes on the line it opens on."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MAX_HEREDOCS = 500  # read per text by the callers: a generated file of a million `<<` stops
MAX_CONTEXTS = 64  # quotes and substitutions nested in one another, kept between lines
_WORD_END = re.compile(r"[\s;&|()<>]")
_WORD_START = frozenset(" \t;&|()<>")
# contexts where the shell reads commands: a `<<` is an operator, a newline ends a command
_COMMANDS = frozenset({"sh", "cmd", "paren", "bq", "case"})


@dataclass(frozen=True)
class Opening:
    delimiter: str
    quoted: bool
    strip_tabs: bool
    at: int = 0  # where the `<<` is in its line


def delimiter(line: str, at: int) -> tuple[str, bool, int] | None:
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


@dataclass
class Lexer:
    """The shell's reading state between lines: a stack of the contexts it is inside."""

    stack: list[str] = field(default_factory=lambda: ["sh"])

    @property
    def reads_commands(self) -> bool:
        """A newline here ends a command: pending here-document bodies start on the next line."""
        return self.stack[-1] in _COMMANDS

    def line(self, text: str) -> tuple[list[Opening], bool]:
        """The operators of one line, in order, and whether it ends in a line continuation.
        Contexts nested past :data:`MAX_CONTEXTS` are dropped at the line's end: the reading
        starts again at plain commands, where every ``<<`` counts (and the state stays small
        enough to copy at every line)."""
        if len(self.stack) > MAX_CONTEXTS:
            self.stack = ["sh"]
        start = list(self.stack)
        got = self._scan(text, arith=True)
        if (
            "arith" in self.stack
        ):  # not closed on its line: maybe not arithmetic, so read it as commands
            self.stack = start
            got = self._scan(text, arith=False)
        return got

    def _scan(self, text: str, *, arith: bool) -> tuple[list[Opening], bool]:
        out: list[Opening] = []
        stack = self.stack
        i, n = 0, len(text)
        while i < n:
            top, c = stack[-1], text[i]
            if top == "sq":
                end = text.find("'", i)
                if end < 0:
                    return out, False
                stack.pop()
                i = end + 1
                continue
            if c == "\\":
                if i == n - 1:
                    return out, top != "ansi"
                i += 2
                continue
            if top == "ansi":
                if c == "'":
                    stack.pop()
                i += 1
                continue
            if c == "'" and top != "dq" and not (top == "brace" and "dq" in stack):
                stack.append("sq")
            elif c == '"':
                if top == "dq":
                    stack.pop()
                else:
                    stack.append("dq")
            elif c == "`":
                if top == "bq":
                    stack.pop()
                else:
                    stack.append("bq")
            elif c == "$" and text.startswith("$((", i) and arith:
                stack.append("arith")
                i += 3
                continue
            elif c == "$" and i + 1 < n and text[i + 1] in "({'":
                stack.append({"(": "cmd", "{": "brace", "'": "ansi"}[text[i + 1]])
                if text[i + 1] == "'" and top == "dq":
                    stack.pop()  # `"$'x'"`: inside double quotes, plain text
                i += 2
                continue
            elif top in ("arith", "ap"):
                if c == "(":
                    stack.append("ap")
                elif c == ")" and top == "ap":
                    stack.pop()
                elif text.startswith("))", i) and top == "arith":
                    stack.pop()
                    i += 2
                    continue
            elif top == "dq":
                pass
            elif top == "brace":
                if c == "}":
                    stack.pop()
            else:  # reading commands
                start = i == 0 or text[i - 1] in _WORD_START
                if c == "#" and start:
                    return out, False  # a comment, to the end of the line
                if start and _word_at(text, i, "case") and _command_word(text, i):
                    stack.append("case")
                elif (
                    top == "case" and start and _word_at(text, i, "esac") and _command_word(text, i)
                ):
                    stack.pop()
                elif c == "(" and text.startswith("((", i) and arith and start:
                    stack.append("arith")
                    i += 2
                    continue
                elif c == "(":
                    stack.append("paren")
                elif c == ")" and top in ("cmd", "paren"):
                    stack.pop()
                elif text.startswith("<<<", i):  # a here-string: its word is the input
                    i += 3
                    continue
                elif text.startswith("<<", i):
                    strip = text.startswith("<<-", i)
                    got = delimiter(text, i + (3 if strip else 2))
                    if got is not None:
                        word, quoted, end = got
                        out.append(Opening(word, quoted, strip, i))
                        if len(out) > MAX_HEREDOCS:  # the callers stop there: the rest unread
                            return out, False
                        i = end
                        continue
            i += 1
        return out, False


_KEYWORDS = frozenset({"then", "do", "else", "elif", "if", "while", "until", "!", "{", "time"})


def _command_word(text: str, i: int) -> bool:
    """The word at ``i`` is where a command starts (``case`` the keyword, not an argument).
    (Each blank run is walked back over once, by the one word after it: linear in the line.)"""
    j = i - 1
    while j >= 0 and text[j] in " \t":
        j -= 1
    if j < 0 or text[j] in ";&|(":
        return True
    k = j
    while k >= 0 and j - k < 6 and text[k] not in _WORD_START:
        k -= 1
    return text[k + 1 : j + 1] in _KEYWORDS and (k < 0 or text[k] in _WORD_START)


def _word_at(text: str, i: int, word: str) -> bool:
    end = i + len(word)
    return text.startswith(word, i) and (end == len(text) or text[end] in _WORD_START)
