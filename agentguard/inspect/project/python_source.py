"""A Python file's text as Python reads it, in UTF-8: what the byte tests of the
pre-filters search (:func:`~agentguard.inspect.project.python_prefilter.python_may_matter`, the
readers' tests of :class:`~agentguard.inspect.project.python_agents.Wanted` and the scan of
string literals they ask).

Python decodes a source file with the encoding its first or second line declares (PEP 263:
``# -*- coding: shift_jis -*-``), and ``ast.parse`` does so for the readers. A test of the
bytes is a test of the text only when the two agree on every byte it reads: in UTF-7
``+ACI-`` is a quote and ``+AGM-`` a ``c`` (a name can be spelled with no byte of it), and
in Shift_JIS, Big5 or GBK the second byte of a character can be ``\\`` (``0x95 0x5C`` is
one character), which a scan of the bytes takes for an escape of the quote after it, and so
reads the code that follows as a string. Such a file is tested as the UTF-8 text Python
reads from it; the parse still reads the bytes as they are (its line numbers are Python's).
"""

from __future__ import annotations

import re

_EOL = re.compile(rb"\r\n|\r|\n")
# Python's own tests (the tokenizer's `get_coding_spec`, `tokenize.detect_encoding`): a
# comment line that spells `coding:` or `coding=` and a name; the second line is read only
# when the first is blank or a comment
_COOKIE = re.compile(rb"[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)", re.ASCII)
_BLANK = re.compile(rb"[ \t\f]*(?:#|$)")
_LATIN_1 = ("latin-1", "iso-8859-1", "iso-latin-1")


def declared_encoding(data: bytes) -> str | None:
    """The encoding Python decodes ``data`` with when it is not UTF-8 (as Python names
    it), else None."""
    start = 0
    for line_number in (1, 2):
        eol = _EOL.search(data, start)
        end = eol.start() if eol is not None else len(data)
        cookie = _COOKIE.match(data, start, end)
        if cookie is not None:
            return _normal(cookie.group(1).decode("ascii"))
        if eol is None or line_number == 2 or _BLANK.match(data, start, end) is None:
            return None
        start = eol.end()
    return None


def _normal(name: str) -> str | None:
    """Python's ``get_normal_name``: None for UTF-8, else the name it decodes with."""
    low = name[:12].lower().replace("_", "-")
    if low == "utf-8" or low.startswith("utf-8-"):
        return None
    if low in _LATIN_1 or low.startswith(tuple(n + "-" for n in _LATIN_1)):
        return "iso-8859-1"
    return name


def as_python_reads(data: bytes) -> bytes:
    """``data`` decoded as Python decodes it and encoded in UTF-8 (``data`` itself when
    Python reads it as UTF-8, or when Python cannot decode it: it then fails to parse)."""
    encoding = declared_encoding(data)
    if encoding is None:
        return data
    try:
        text = data.decode(encoding)
    except (LookupError, UnicodeError):
        return data
    return text.encode("utf-8", "surrogatepass")
