"""The one terminal escaper of the text output (used by :mod:`.text` and :mod:`.text_groups`)."""

from __future__ import annotations

import re

# Shown as escapes, never sent raw: C0/C1 controls (ESC starts every terminal sequence:
# OSC 52 writes the clipboard, OSC 0 the title; CR and LF forge lines), DEL, and the
# invisible format characters that reorder or hide text (bidi overrides, zero-width).
_CONTROL = re.compile(
    "[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ud800-\udfff]"
)


_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def visible(s: str) -> str:
    """The one terminal escaper: ``s`` with every control character shown as an escape.

    Data is never parsed as rich markup either: text is always handed to rich as a
    :class:`~rich.text.Text` built from the escaped string (``[/x]``, ``app/[slug]/``
    print as written)."""
    if not _CONTROL.search(s):
        return s
    return _CONTROL.sub(_escape, s)


def _escape(m: re.Match[str]) -> str:
    ch = m.group(0)
    code = ord(ch)
    if ch in _NAMED:
        return _NAMED[ch]
    if 0xDC80 <= code <= 0xDCFF:  # a non-UTF-8 byte of a file name (surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
