"""The cheap byte tests that decide whether a project file is read by the command-line
readers at all: a ``claude`` command (:mod:`.cli_flags`), a ``codex``/``gemini`` command
(:mod:`.engine_cli`), a claude-code-action step (:mod:`.action_steps`).

They run on every candidate file, so they live apart from their readers: a scan of a
folder where no file holds one of these words (a `lock` of a project that holds only its
pyproject.toml) imports none of the readers, nor the records they build."""

from __future__ import annotations

import codecs
import re

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
    end = len(data)
    for name in (b"codex", b"gemini"):
        at = data.find(name)
        while at >= 0:
            after = at + len(name)
            if (at == 0 or data[at - 1] in _ENGINE_BEFORE) and (
                after == end or data[after] not in _WORD
            ):
                return True
            at = data.find(name, after)
    return False


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


# A letter written as an escape that YAML's double quotes, Python, JavaScript, bash's
# `$'...'`, `printf` and `echo -e` turn back into the letter: `\x63`, `\u0063`,
# `\U00000063`, octal `\143`.
_HEX_LETTER = rb"(?:[46][1-9a-fA-F]|[57][0-9aA])"
_LETTER_ESCAPE = re.compile(
    rb"\\(?:x(" + _HEX_LETTER + rb")|u00(" + _HEX_LETTER + rb")|U000000("
    + _HEX_LETTER + rb")|(1[0-7][0-7]))"
)  # fmt: skip


def _letter(m: re.Match[bytes]) -> bytes:
    hex_digits = m[1] or m[2] or m[3]
    return bytes([int(hex_digits, 16) if hex_digits else int(m[4], 8)])


def _uses(data: bytes) -> int:
    """How many command lines the two needles find (claude; codex and gemini)."""
    count = len(_USE.findall(data))
    end = len(data)
    for name in (b"codex", b"gemini"):
        at = data.find(name)
        while at >= 0:
            after = at + len(name)
            if (at == 0 or data[at - 1] in _ENGINE_BEFORE) and (
                after == end or data[after] not in _WORD
            ):
                count += 1
            at = data.find(name, after)
    return count


def escaped_command(data: bytes) -> bool:
    """A ``claude``, ``codex`` or ``gemini`` command that only letter escapes spell
    (``"\\x63laude --dangerously-skip-permissions"`` in a workflow's double-quoted
    ``run:``, ``$'\\x63laude'`` in a script): the needles and the line readers read the
    text as written, and would find no command where the runner runs one. True when the
    text with every letter escape decoded holds more command lines than the text itself."""
    if b"\\" not in data or _LETTER_ESCAPE.search(data) is None:
        return False
    return _uses(_LETTER_ESCAPE.sub(_letter, data)) > _uses(data)
