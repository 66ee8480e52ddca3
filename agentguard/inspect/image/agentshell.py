"""Reading a shell wrapper: the command lines it runs in the foreground.

Not a shell: ``exec`` lines, and the last command when there is none, split the way the
shell would split plain words (``shlex``); ``"$@"`` stands for the wrapper's arguments.
"""

from __future__ import annotations

import shlex


def exec_lines(text: str) -> list[tuple[int, tuple[str, ...]]]:
    """Command lines a shell wrapper runs in the foreground: every ``exec`` line, and the
    last command when there is no ``exec`` (line numbers 1-based)."""
    found: list[tuple[int, tuple[str, ...]]] = []
    last: tuple[int, tuple[str, ...]] | None = None
    for no, raw in enumerate(text.splitlines(), 1):
        stripped = raw.strip()
        if not stripped or stripped.startswith("#") or stripped.endswith(("{", "then", "do")):
            continue
        try:
            words = tuple(shlex.split(stripped, comments=True))
        except ValueError:
            continue
        if not words or words[0] in (
            "set",
            "export",
            "cd",
            "echo",
            "fi",
            "done",
            "}",
            "if",
            "[",
            "test",
            "trap",
            "umask",
        ):
            continue
        if "=" in words[0] and not words[0].startswith("="):
            continue
        if words[0] == "exec":
            found.append((no, words[1:]))
        else:
            last = (no, words)
    if not found and last is not None:
        found.append(last)
    return [(no, words) for no, words in found if words]


WRAPPER_ARGS = frozenset({"$@", "$*", '"$@"'})
