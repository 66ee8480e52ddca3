"""A line's words as a POSIX shell reads them: one reader for every command line agentguard
reads (``claude``, ``codex``, ``gemini``), so that a quote inside ``bash -c '...'`` splits
the same way wherever it is."""

from __future__ import annotations

import re

_DQ_ESCAPES = frozenset('$`"\\\n')


def shell_words(line: str) -> list[tuple[str, bool]]:
    """The words of a line as a POSIX shell reads them, each with whether any part of it
    was quoted: adjacent quoted and unquoted parts are one word (`'a'\\''b'` is `a'b`,
    the idiom that puts a quote inside `bash -c '...'`), a backslash outside quotes keeps
    the next character, inside double quotes only before a dollar, a backtick, a double
    quote, a backslash or a newline. An unquoted word also
    ends at a comma or bracket (an argv list in code). A quote that is never closed is
    skipped, not read to the end of the line (prose: `claude can't`)."""
    out: list[tuple[str, bool]] = []
    word: list[str] = []
    quoted = in_word = False
    for m in _SEGMENT.finditer(line):
        single, double, escaped, bare, gap = m.groups()
        if gap is not None:
            if in_word:
                out.append(("".join(word), quoted))
            word, quoted, in_word = [], False, False
            continue
        if single is not None or double is not None:
            word.append(single if single is not None else _DQ_ESCAPE.sub(_dq_unescape, double))
            quoted = True
        elif escaped is not None:
            word.append(escaped)
        elif bare is not None:
            word.append(bare)
        else:
            continue  # a quote never closed (skipped), or a backslash at the very end
        in_word = True
    if in_word:
        out.append(("".join(word), quoted))
    return out


# one segment of a word (single-quoted, double-quoted, a backslash escape, a bare run), or
# what ends a word; a quote that is never closed matches alone and is skipped
_SEGMENT = re.compile(
    r"""'([^']*)'|"((?:[^"\\]|\\.)*)"|\\(.)|([^\s"'`\\,\[\](){};]+)|([\s`,\[\](){};]+)|['"\\]""",
    re.S,
)
_DQ_ESCAPE = re.compile(r"\\(.)", re.S)


def _dq_unescape(m: re.Match[str]) -> str:
    return m.group(1) if m.group(1) in _DQ_ESCAPES else m.group(0)
