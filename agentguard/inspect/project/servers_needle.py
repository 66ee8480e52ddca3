"""Whether a file may name ``mcpServers``: the cheap test that decides whether the MCP
launch readers of code and here-documents parse it at all.

JSON and JavaScript strings (and JavaScript names) can spell the word with escapes:
``"mcp\\u0053ervers"`` is ``mcpServers`` to ``JSON.parse`` and to node, and holds no
``mcpServers`` bytes. A test for the bytes alone would skip that file as naming no server;
so each letter may also be written ``\\u00XX``, ``\\xXX`` or ``\\u{XX}``."""

from __future__ import annotations

import functools
import re

WORD = "mcpServers"


def _letter(c: str) -> str:
    code = "".join(f"[{d}{d.upper()}]" if d.isalpha() else d for d in f"{ord(c):02x}")
    return rf"(?:{c}|\\(?:u00{code}|x{code}|u\{{0*{code}\}}))"


_SPELLED = "".join(_letter(c) for c in WORD)
# The same word as two patterns, one per way of writing its first letter: each opens with
# a literal, which the regex engine finds with its fast loop (a pattern that opens with an
# alternation is tried at every byte: three times the cost). A match of either is a match
# of the whole pattern, and the other way round.
_REST = "".join(_letter(c) for c in WORD[1:])


# (compiled where a file holds an escape: most runs read none, and the four patterns cost
# a few milliseconds to compile in every `lock` and `inspect`)
@functools.cache
def spelled_text() -> re.Pattern[str]:
    return re.compile(_SPELLED)


@functools.cache
def spelled_bytes() -> re.Pattern[bytes]:
    return re.compile(_SPELLED.encode())


@functools.cache
def _split_bytes() -> tuple[re.Pattern[bytes], re.Pattern[bytes]]:
    return (
        re.compile(("m" + _REST).encode()),
        re.compile((_letter("m")[len("(?:m|") : -1] + _REST).encode()),
    )


_ESCAPE_BYTES = re.compile(rb"\\[ux]")  # (a literal first: one fast scan, not two)
_WORD_BYTES = WORD.encode()


def names_servers(data: bytes) -> bool:
    """``data`` holds ``mcpServers``, written out or with escapes."""
    if _WORD_BYTES in data:
        return True
    # (a backslash is found with memchr, ten times faster than the pattern's search: most
    # files hold none)
    return (
        b"\\" in data
        and _ESCAPE_BYTES.search(data) is not None
        and any(p.search(data) is not None for p in _split_bytes())
    )


def text_names_servers(text: str) -> bool:
    """:func:`names_servers` for decoded text."""
    if WORD in text:
        return True
    return ("\\u" in text or "\\x" in text) and spelled_text().search(text) is not None
