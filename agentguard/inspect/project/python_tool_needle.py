"""The bytes test of the tools decorated onto an agent imported from another module (run
on every Python file, so it imports nothing but ``re`` and the byte tests' gap; each search
is linear in the file, its spans bounded, whatever the file holds)."""

from __future__ import annotations

import re

from agentguard.inspect.project.python_import_needles import BLANKS

MAX_NAMES = 20  # decorator owners looked up per file (past that: parsed)

# `@agent.tool`, as Python also reads it: blanks around the dot, and (since 3.9, any
# expression) in parentheses, line ends and continuations inside (`@(agent\n .tool)`)
_DECORATOR = re.compile(
    rb"@[ \t]*(?:\("
    + BLANKS
    + rb")*([A-Za-z_]\w{0,80})"
    + BLANKS
    + rb"\."
    + BLANKS
    + rb"tool(?:_plain)?\b"
)
# an import statement at a line's start: `from X import a, b`, `from X import (a,\n b)`,
# `import a.b as c` (the names after `import`): a parenthesised list, its comments read
# whole (a comment may hold a parenthesis: `# re-export (public)`), ending at the next
# parenthesis outside a comment; else the logical line, backslash continuations included.
# Each part is read one way only (plain bytes up to a `#` or a parenthesis, a comment to
# its newline, a backslash with the byte after it: a shorter run fails at once), and a
# parenthesised span ends at the next parenthesis, which starts the next such span: no
# byte is searched by two of them, linear on hostile files.
_IMPORT = re.compile(
    rb"^[ \t]*(?:from[ \t]+[\w.]+[ \t]+)?import[ \t]+"
    rb"(\([^()#]*(?:#[^\n]*\n[^()#]*)*\)|[^\n\\]*(?:\\[\s\S][^\n\\]*)*)",
    re.MULTILINE,
)
_WORD = re.compile(rb"[A-Za-z_]\w*")


def may_decorate_elsewhere(data: bytes) -> bool:
    """A ``@X.tool``/``@X.tool_plain`` decorator whose ``X`` the file imports by name
    (``from .agent import agent``, in parentheses too, or ``import agent``)."""
    if b".tool" not in data:
        return False
    owners: set[bytes] = set()
    for m in _DECORATOR.finditer(data):
        owners.add(m.group(1))
        if len(owners) > MAX_NAMES:
            return True  # (more owners than looked up: maybe; the 21st may be imported)
    if not owners or b"import" not in data:
        return False
    # (every statement's names at once: one search of the file, no Python step per import)
    return not owners.isdisjoint(_WORD.findall(b"\n".join(_IMPORT.findall(data))))
