"""Whether a file may name ``mcpServers``: the cheap test that decides whether the MCP
launch readers of code and here-documents parse it at all.

JSON and JavaScript strings (and JavaScript names) can spell the word with escapes:
``"mcp\\u0053ervers"`` is ``mcpServers`` to ``JSON.parse`` and to node, and holds no
``mcpServers`` bytes. A test for the bytes alone would skip that file as naming no server;
so each letter may also be written ``\\u00XX``, ``\\xXX`` or ``\\u{XX}``."""

from __future__ import annotations

import re

WORD = "mcpServers"


def _letter(c: str) -> str:
    code = "".join(f"[{d}{d.upper()}]" if d.isalpha() else d for d in f"{ord(c):02x}")
    return rf"(?:{c}|\\(?:u00{code}|x{code}|u\{{0*{code}\}}))"


_SPELLED = "".join(_letter(c) for c in WORD)
SPELLED_TEXT = re.compile(_SPELLED)
SPELLED_BYTES = re.compile(_SPELLED.encode())


def names_servers(data: bytes) -> bool:
    """``data`` holds ``mcpServers``, written out or with escapes."""
    if WORD.encode() in data:
        return True
    return (b"\\u" in data or b"\\x" in data) and SPELLED_BYTES.search(data) is not None


def text_names_servers(text: str) -> bool:
    """:func:`names_servers` for decoded text."""
    if WORD in text:
        return True
    return ("\\u" in text or "\\x" in text) and SPELLED_TEXT.search(text) is not None
