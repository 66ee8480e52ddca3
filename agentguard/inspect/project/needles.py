"""The cheap byte tests that decide whether a project file is read by the command-line
readers at all: a ``claude`` command (:mod:`.cli_flags`), a ``codex``/``gemini`` command
(:mod:`.engine_cli`), a claude-code-action step (:mod:`.action_steps`).

They run on every candidate file, so they live apart from their readers: a scan of a
folder where no file holds one of these words (a `lock` of a project that holds only its
pyproject.toml) imports none of the readers, nor the records they build."""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator

ACTION_NEEDLE = b"claude-code-action"  # (the step reader reads nothing without it)

HARNESS_TAIL = b"_harness.cjs"  # (gh-aw's `claude_harness.cjs`, see cli_flags._EMBEDDED)
_BEFORE = frozenset(b" \t\n\r\f\v\"'`[(/;&|=")  # what cli_flags._COMMAND allows before `claude`
_AFTER = frozenset(b" \t\n\r\f\v\"'`,])")  # and after it


def has_cli_use(data: bytes) -> bool:
    """``cli_flags._COMMAND.search(data) is not None`` (and ``claude_harness.cjs``), found
    from each ``claude`` in the bytes: the pattern opens with an alternation, so the regex
    engine tries it at every byte (on 180 MB of a large repository that was 2.4 s); this one
    opens with the word and asks what stands before it in a lookbehind, so the engine's
    search for the word runs in C from one occurrence to the next (a Python loop over each
    ``claude`` of 150 MB of recorded exchanges that name Claude models cost twice as much)."""
    return _USE.search(data) is not None


_USE = re.compile(
    rb"claude(?:_args:|"
    + re.escape(HARNESS_TAIL)
    # (the package run by npx/bunx/dlx: `npx -y @anthropic-ai/claude-code --flags`)
    + rb"|-code(?<=@anthropic-ai/claude-code)"
    + rb"|(?<![^"
    + re.escape(bytes(sorted(_BEFORE)))
    + rb"]claude)(?:["
    + re.escape(bytes(sorted(_AFTER)))
    + rb"]|\Z))"
)


_ENGINE_BEFORE = _BEFORE  # what engine_cli._COMMAND allows before the name
_WORD = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def has_engine_cli_use(data: bytes) -> bool:
    """``engine_cli._COMMAND.search(data) is not None``, found from each ``codex`` and
    ``gemini`` in the bytes (a scoped package's name holds ``/codex`` or ``/gemini`` at a
    word's end, so the two names are all it takes; the pattern opens with an alternation,
    which the regex engine tries at every byte)."""
    return next(_engine_uses(data), None) is not None


def _engine_uses(data: bytes) -> Iterator[tuple[int, int]]:
    """(start, end) of each ``codex`` and ``gemini`` that stands as a command's name."""
    end = len(data)
    for name in (b"codex", b"gemini"):
        at = data.find(name)
        while at >= 0:
            after = at + len(name)
            if (at == 0 or data[at - 1] in _ENGINE_BEFORE) and (
                after == end or data[after] not in _WORD
            ):
                yield at, after
            at = data.find(name, after)


_WIDE_BOMS = (b"\xff\xfe", b"\xfe\xff")  # UTF-16 (and UTF-32 LE, which starts the same)
BINARY = "binary"  # what :func:`wide_text` calls a head that is no text in any of them
_WIDE = {
    "utf-32-le": "UTF-32LE",
    "utf-32-be": "UTF-32BE",
    "utf-16-le": "UTF-16LE",
    "utf-16-be": "UTF-16BE",
}
_TEXT_CONTROLS = frozenset("\t\n\r\f\v")


def wide_text(data: bytes) -> str | None:
    """What a file is when it is text the byte needles cannot read (they look for ASCII
    words; in UTF-16 or UTF-32 every letter is split by NUL bytes): its encoding as a
    reason, else None. A byte-order mark, or NUL bytes in a quarter of its first 512
    bytes (UTF-16 without a mark); a stray NUL in UTF-8 text is not enough. Such a head
    that is no text in UTF-16 or UTF-32 either (a control character, or no decoding at
    all: an MPEG transport stream named ``.ts``, a DVB capture's zero-filled packets) is
    :data:`BINARY`: no parser of its kind reads it (YAML refuses control characters,
    Python and Node a NUL), so it is no configuration unread."""
    if data.startswith(b"\x00\x00\xfe\xff") or data.startswith(b"\xff\xfe\x00\x00"):
        return "UTF-32"
    if data.startswith(_WIDE_BOMS):
        return "UTF-16"
    head = data[:512]
    if len(head) >= 8 and head.count(0) * 4 >= len(head):
        head = head[: len(head) - len(head) % 4]
        for encoding, name in _WIDE.items():
            try:
                text = codecs.getincrementaldecoder(encoding)().decode(head)
            except UnicodeDecodeError:
                continue
            if all(c.isprintable() or c in _TEXT_CONTROLS for c in text):
                return f"{name} without a byte-order mark"
        return BINARY
    return None


SHELL_EXT = (".sh", ".bash", ".zsh")


def as_shell_reads(path: str, data: bytes) -> bytes:
    """A shell script's bytes as the shell runs them: dash drops every NUL byte of a
    script, and bash too past its first 80 bytes (it refuses a file with one there), so
    ``c\\0laude`` runs ``claude``, and so does a UTF-16 body after an ASCII head (a
    head the test of :func:`wide_text` finds no NUL in). ``data`` itself for any other
    file."""
    if path.endswith(SHELL_EXT) and b"\x00" in data:
        return data.replace(b"\x00", b"")
    return data


# What the runners turn back into a character that the text as written spells otherwise:
# YAML's double quotes, Python, JavaScript, bash's `$'...'`, `printf` and `echo -e` expand a
# printable character's escape (`\x63`, `\u0063`, `\U00000063`, JS `\u{63}`, bash's short
# `\u63`, octal `\143` and `\0143`, Python's `\N{LATIN SMALL LETTER C}`) and `\t`, `\n`...;
# a backslash at a line's end joins two lines (YAML double quotes, bash, Python, JS, a
# Dockerfile). The shell also drops a backslash before a letter (`cl\\aude`) and quotes
# inside a word (`c''laude`, `"cl"aude`, `$'\x63'laude`). An escaped backslash stays.
_HEX = rb"(?:[2-7][0-9a-fA-F]|0[9a-dA-D])"  # printable ASCII, tab, newline, VT, FF, CR
_NOT_HEX = rb"(?![0-9a-fA-F])"
_ESCAPES = (
    rb"\\\\"
    + rb"|\\(?:x(" + _HEX + rb")|u\{0*(" + _HEX + rb")\}|u00(" + _HEX + rb")|u0?("
    + _HEX + rb")" + _NOT_HEX + rb"|U000000(" + _HEX + rb")|U0{0,5}(" + _HEX + rb")"
    + _NOT_HEX + rb"|0?(0[4-7][0-7]|1[0-7][0-7]|01[1-5])"
    + rb"|N\{LATIN (SMALL|CAPITAL) LETTER ([A-Z])\}|([tnrfv])|(\r?\n[ \t]*)"
)  # fmt: skip
_W = rb"[A-Za-z0-9_]"


def _quote(q: bytes) -> bytes:
    """A quote inside a word, not after a Python string's prefix (`f"claude_args:`); the
    quote comes first in the pattern, so the regex engine skips to the next quote in C."""
    return (
        q + rb"(?<=" + _W + q + rb")(?<![^A-Za-z0-9_][bBfFrRuU]" + q
        + rb")(?<![^A-Za-z0-9_][bBfFrR]{2}" + q + rb")(?=" + _W + rb")"
    )  # fmt: skip


_REWRITE = re.compile(_ESCAPES + rb"|(?!))")  # (group 12: never, the shell's alone)
_SHELL_REWRITE = re.compile(
    _ESCAPES + rb"|([A-Za-z]))|" + rb"|".join(_quote(q) for q in (b"''", b'""', b"'", b'"'))
)
_SHORT = {b"t": b"\t", b"n": b"\n", b"r": b"\r", b"f": b"\f", b"v": b"\v"}


def _rewritten(m: re.Match[bytes]) -> bytes | None:
    """What the runner makes of one match of :data:`_REWRITE` (None: it stays as written)."""
    if m[0] == b"\\\\":
        return None
    hex_digits = next((h for h in m.groups()[:6] if h is not None), None)
    if hex_digits is not None:
        return bytes([int(hex_digits, 16)])
    if m[7] is not None:
        return bytes([int(m[7], 8)])
    if m[9] is not None:
        return m[9].lower() if m[8] == b"SMALL" else m[9]
    if m[10] is not None:
        return _SHORT[m[10]]
    if m.lastindex == 12:
        return m[12]
    return b""  # a joined line, a quote inside a word


def _as_run(data: bytes, shell: bool) -> tuple[bytes, set[int]]:
    """``data`` as a runner may expand it, and the offsets in it of each character an
    expansion wrote (or, where it removed text, of the character after the removal)."""
    parts: list[bytes] = []
    marks: set[int] = set()
    at = size = 0
    for m in (_SHELL_REWRITE if shell else _REWRITE).finditer(data):
        new = _rewritten(m)
        if new is None:
            continue
        parts.append(data[at : m.start()])
        size += m.start() - at
        if m[10] is None:  # (a `\n` beside a name is prose's line end: `"... claude\n"`)
            marks.add(size)
        parts.append(new)
        size += len(new)
        at = m.end()
    parts.append(data[at:])
    return b"".join(parts), marks


def _use_spans(data: bytes) -> list[tuple[int, int]]:
    """Where each command line the two needles find stands, with the characters they ask
    about (the one before the name, the one after it, `@anthropic-ai/` before `claude-code`)."""
    spans = [
        (m.end() - 25 if m[0].endswith(b"-code") else m.start() - 1, m.end())
        for m in _USE.finditer(data)
    ]
    spans += [(at - 1, after) for at, after in _engine_uses(data)]
    return spans


# The cheap tests first: an escape of a printable character, or a backslash at a word's
# end that joins it to the next line's; a backslash before a name; in a shell's text, a
# quote or a backslash between two letters of the names where the names without quotes
# and backslashes are more. (The quotes and backslashes are all `'` for the search: a
# pattern that opens with one byte is searched in C from one to the next, one that opens
# with a set of three byte by byte, at twice the cost on 150 MB of recorded exchanges.)
_MAY_ESCAPE = re.compile(
    rb"\\(?:x(?:[2-7]|0[9a-dA-D])|u\{0*[2-7][0-9a-fA-F]\}|u00[2-7]|u0?[2-7][0-9a-fA-F]"
    rb"(?![0-9a-fA-F])|U000000[2-7]|U0{0,5}[2-7][0-9a-fA-F](?![0-9a-fA-F])"
    rb"|0?(?:0[4-7]|1[0-7])[0-7]|0?01[1-5]|N\{LATIN|(?<=[A-Za-z0-9_]\\)\r?\n[ \t]*[A-Za-z0-9_]"
    rb"|claude|codex|gemini)"  # (the last: the shell's `\claude`)
)
_L = rb"[acdegilmnoux]"  # the letters of the three names
_AS_QUOTE = bytes.maketrans(b'"\\', b"''")
_MAY_JOIN = re.compile(rb"'(?='?" + _L + rb")(?<=" + _L + rb"')")
_NAMES = (b"claude", b"codex", b"gemini")


def _may_expand(data: bytes, shell: bool) -> bool:
    if _MAY_ESCAPE.search(data) is not None:
        return True
    if not shell:
        return False
    if _MAY_JOIN.search(data.translate(_AS_QUOTE)) is None:
        return False
    bare = data.translate(None, b"'\"\\")
    return any(n in bare and bare.count(n) > data.count(n) for n in _NAMES)


def escaped_command(data: bytes, shell: bool = True) -> bool:
    """A ``claude``, ``codex`` or ``gemini`` command that only an expansion spells
    (``"\\x63laude --dangerously-skip-permissions"`` in a workflow's double-quoted
    ``run:``, ``$'\\x63laude'`` or ``c''laude`` in a script, ``\\x20`` after the name):
    the needles and the line readers read the text as written, and would find no command
    where the runner runs one. True when the text as a runner may expand it holds a
    command line that touches a character an expansion wrote (a decoy elsewhere that an
    expansion hides counts for nothing). ``shell``: the text may be a shell's (a script,
    a workflow, a Dockerfile), whose quote and backslash removal counts too; Python's and
    JavaScript's escapes are the others'."""
    if not _may_expand(data, shell):
        return False
    text, marks = _as_run(data, shell)
    if not marks:
        return False
    return any(any(i in marks for i in range(s, e + 1)) for s, e in _use_spans(text))
