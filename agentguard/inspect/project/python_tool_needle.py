"""The bytes test of the tools decorated onto an agent imported from another module (run
on every Python file, so it imports nothing but ``re`` and the byte tests' gap; each search
is linear in the file, its spans bounded, whatever the file holds)."""

from __future__ import annotations

import re

from agentguard.inspect.project.python_import_needles import BLANKS

MAX_NAMES = 20  # decorator owners looked up per file (past that: parsed)

_NAME_BYTE = rb"[A-Za-z0-9_\x80-\xff]"  # (a name's bytes: any non-ASCII letter's too)
# `@agent.tool`, as Python also reads it: blanks around the dot and after the `@`, and
# (since 3.9, any expression) in brackets, line ends and continuations inside
# (`@(agent\n .tool)`, `@(agent).tool`); the owner a name of any length and letters
_DECORATOR = re.compile(
    rb"@"
    + BLANKS
    + rb"(?:\("
    + BLANKS
    + rb")*([A-Za-z_\x80-\xff]"
    + _NAME_BYTE
    + rb"*)(?:[ \t\f\r\n)]|\\(?:\r\n|\r(?!\n)|\n))*\."
    + BLANKS
    + rb"tool(?:_plain)?(?!"
    + _NAME_BYTE
    + rb")"
)


# a decorator in brackets with a comment inside (`@(agent  # the agent\n).tool`): read as
# "maybe" rather than through the comment; a bracket longer than a decorator's is maybe too
_COMMENTED = re.compile(rb"@" + BLANKS + rb"\((?:[^)#]{0,256}#|[^)#]{257})")


def may_decorate_elsewhere(data: bytes) -> bool:
    """A ``@X.tool``/``@X.tool_plain`` decorator whose ``X`` the file may import: an import
    that binds ``X`` spells it outside the decorators (a name Python reads from other
    letters sends the file to every reader before this test), so an owner the file spells
    nowhere else is bound by nothing here. (Read without finding the import statements: a
    statement after `;` or `try:`, blanks Python allows, a comment ending in a backslash,
    each made a byte test of them miss one.)"""
    if b".tool" not in data:
        return False
    if _COMMENTED.search(data) is not None:
        return True  # (a decorator in brackets that hold a comment: maybe)
    uses: dict[bytes, int] = {}
    for m in _DECORATOR.finditer(data):
        uses[m.group(1)] = uses.get(m.group(1), 0) + 1
        if len(uses) > MAX_NAMES:
            return True  # (more owners than looked up: maybe; the 21st may be imported)
    for owner, count in uses.items():
        word = re.compile(
            rb"(?<!" + _NAME_BYTE + rb")" + re.escape(owner) + rb"(?!" + _NAME_BYTE + rb")"
        )
        if len(word.findall(data)) > count:
            return True
    return False
