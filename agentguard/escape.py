"""The one output escaper, one function per channel: what a value from the scanned project
(a file name, an MCP server's name, a workflow's ``uses:`` ref) becomes before it reaches
a person or a program reading agentguard's output.

Channels:

- **terminal** (the text report, stderr messages, progress): :func:`terminal` shows every
  control character as an escape (ESC starts every terminal sequence; CR, LF, NEL, LS and
  PS would start a line of their own), and breaks the runner's legacy ``##[`` command
  prefix wherever it stands;
- **GitHub workflow commands** (the runner parses every line agentguard writes to stdout
  or stderr in a job): :func:`commands` is the last pass over a whole text output, and
  breaks a ``::`` that starts a line (after any spaces: the runner trims them) and any
  ``##[``. The data of a command agentguard itself would write goes through
  :func:`command_data` (the runner's own ``%``-encoding);
- **fix snippets**: :func:`snippet` builds one from its lines. Each argument is one line:
  a newline inside a value put into it is shown as ``\\n``, so only the lines the rule
  wrote are lines (the text report prints a snippet line by line);
- **Markdown** (``SUMMARY.md``, anything rendered as GitHub Markdown): :func:`md_text` for
  prose holding data (controls escaped, every character with a Markdown or HTML meaning
  backslash-escaped: no link, image, HTML tag, emphasis, table cell or code span can be
  opened by data), :func:`md_code` for a value shown as code (a code span whose fence is
  longer than any backtick run in it), :func:`md_fence` for verbatim lines.

Redaction is not escaping: secrets are masked by :mod:`agentguard.redact` first, and
escaping happens after (an escape never hides a secret from the redactor).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# Shown as escapes, never sent raw: C0/C1 controls (ESC starts every terminal sequence:
# OSC 52 writes the clipboard, OSC 0 the title; CR, LF and NEL forge lines), DEL, the line
# and paragraph separators U+2028/U+2029, lone surrogates, and every character that is
# invisible or reorders text: Unicode's Default_Ignorable_Code_Point set (bidi controls,
# zero-width characters, soft hyphen, fillers, variation selectors, and the tag characters
# U+E0000..U+E007F that spell ASCII no one sees but a model reads: "ASCII smuggling")
# and the interlinear annotation marks. One definition, for every channel and the
# committed files agentguard writes (:data:`HIDDEN_IN_JSON`).
INVISIBLE = (
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0000-\U000e0fff"
)
_CONTROL = re.compile(f"[\x00-\x1f\x7f-\x9f\u2028\u2029{INVISIBLE}\ud800-\udfff]")
# The same in JSON text agentguard writes with ``ensure_ascii=False`` (the encoder has
# escaped C0 already; a raw newline there is the layout's): see :func:`json_hidden`.
HIDDEN_IN_JSON = re.compile(f"[\x7f-\x9f\u2028\u2029{INVISIBLE}\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# The runner's legacy form ``##[command]data`` is found anywhere in a line.
_LEGACY = "##["
_LEGACY_INERT = "#\\x23["
# A workflow command: ``::name`` at the start of a line, after any whitespace.
_COMMAND_LINE = re.compile(r"^([ \t\f\v]*):(?=:)", re.MULTILINE)


def terminal(s: str) -> str:
    """``s`` for a terminal: every control character shown as an escape (``\\n``,
    ``\\x1b``, ``\\u2028``), and the ``##[`` command prefix broken (``#\\x23[``)."""
    if _CONTROL.search(s):
        s = _CONTROL.sub(_escape, s)
    if _LEGACY in s:
        s = s.replace(_LEGACY, _LEGACY_INERT)
    return s


def _escape(m: re.Match[str]) -> str:
    ch = m.group(0)
    code = ord(ch)
    if ch in _NAMED:
        return _NAMED[ch]
    if 0xDC80 <= code <= 0xDCFF:  # a non-UTF-8 byte of a file name (surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    if code > 0xFFFF:
        return f"\\U{code:08x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def json_hidden(text: str) -> str:
    """JSON text (written with non-ASCII as itself) with every hidden character of
    :data:`HIDDEN_IN_JSON` written as its ``\\uXXXX`` escape (a surrogate pair past the
    BMP): the same strings to every JSON reader, and nothing hidden in a diff of it."""
    return HIDDEN_IN_JSON.sub(_json_escape, text) if HIDDEN_IN_JSON.search(text) else text


def _json_escape(m: re.Match[str]) -> str:
    code = ord(m.group(0))
    if code > 0xFFFF:
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def commands(text: str) -> str:
    """A whole text output made inert for the runner: no line starts a workflow command
    (``::`` after any leading whitespace becomes ``\\x3a:``) and no ``##[`` stands in it.
    (The lines themselves are agentguard's: every value in them went through
    :func:`terminal`, so none holds a line break.)"""
    if "::" in text:
        text = _COMMAND_LINE.sub(r"\1\\x3a", text)
    if _LEGACY in text:
        text = text.replace(_LEGACY, _LEGACY_INERT)
    return text


def command_data(s: str) -> str:
    """The data of a workflow command agentguard writes (``::error::DATA``), encoded the
    way the runner decodes it: ``%``, CR and LF as ``%25``, ``%0D``, ``%0A``."""
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def json_text(text: str) -> str:
    """A JSON document (JSON, SARIF) that forges no runner command when printed to a CI
    log, holding the same data: a control character is always escaped by the encoder, a
    line never starts with ``::`` in indented JSON, and a ``[`` after ``##`` is written
    ``\\u005b`` (the same string to every JSON reader)."""
    return text.replace(_LEGACY, "##\\u005b") if _LEGACY in text else text


def snippet(*lines: str) -> str:
    """A fix snippet of these lines, each escaped for the terminal (a line break inside a
    value put into a line is shown as ``\\n``, never a line of its own)."""
    return "\n".join(terminal(line) for line in lines)


def snippet_lines(lines: Iterable[str]) -> str:
    """:func:`snippet` of an iterable."""
    return snippet(*lines)


# What data could open markup with, outside a code span: HTML (``<``, ``&``), a link or
# image (``[``), a code span (a lone backtick), a table cell (``|``), a mention (``@``:
# it notifies the account where GitHub renders it), and the backslash itself. (Emphasis
# is left: it changes how data looks, never what it links to, runs or hides.)
_MD_SPECIAL = re.compile(r"([\\`\[\]<>!|&@])")
# A code span: a run of backticks, text, the same run (not longer).
_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")


def md_text(s: str) -> str:
    """Prose holding data, for Markdown: controls shown as escapes (a newline never starts
    a block), and outside the prose's code spans every character that opens HTML, a link,
    a code span, a table cell or a mention backslash-escaped. Inside a code span nothing
    is markup; data can only move where a span ends, never open anything but text."""
    s = terminal(s)
    out: list[str] = []
    last = 0
    for m in _SPAN.finditer(s):
        out += [_MD_SPECIAL.sub(r"\\\1", s[last : m.start()]), m.group(0)]
        last = m.end()
    out.append(_MD_SPECIAL.sub(r"\\\1", s[last:]))
    return "".join(out)


def md_code(s: str) -> str:
    """A value as a Markdown code span: nothing in it is markup (no HTML, link, emphasis),
    its backticks cannot close the span. (Not for a table cell: GitHub splits a cell at a
    ``|`` even inside a code span; SUMMARY.md has no tables.)"""
    body = terminal(s)
    runs = [len(r) for r in re.findall(r"`+", body)]
    fence = "`" * (max(runs, default=0) + 1)
    if body.startswith("`") or body.endswith("`") or (body.startswith(" ") and body.strip()):
        body = f" {body} "
    return f"{fence}{body or ' '}{fence}"


def md_fence(lines: Iterable[str], indent: str = "") -> list[str]:
    """Verbatim lines as a fenced code block whose fence no line can close."""
    body = [terminal(x) for x in lines]
    runs = [len(r) for x in body for r in re.findall(r"`{3,}", x)]
    fence = "`" * max(3, max(runs, default=0) + 1)
    return [f"{indent}{fence}", *(f"{indent}{x}" for x in body), f"{indent}{fence}"]


# What a Mermaid label may hold as itself; every other character is written as Mermaid's
# entity code (``#60;``): no quote ends the label, no bracket, arrow, pipe, semicolon or
# newline ends the node or the statement, no backtick opens a Markdown string, no ``<``
# opens HTML (the renderer turns ``#60;`` into the character ``<``, shown as text).
_MERMAID_OTHER = re.compile(r"[^A-Za-z0-9 _.,/+=@*?-]")


def mermaid_label(s: str, limit: int = 120) -> str:
    """``s`` as text inside a quoted Mermaid label (``id["..."]``): controls escaped as
    for the terminal, then every character outside a small plain set entity-coded, and
    long values cut (a cut is marked with ``...``)."""
    s = terminal(s)
    if len(s) > limit:
        s = s[: limit - 3] + "..."
    return _MERMAID_OTHER.sub(lambda m: f"#{ord(m.group(0))};", s)
