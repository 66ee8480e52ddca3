"""The bytes test of the tools decorated onto an agent imported from another module (run
on every Python file, so it imports nothing but ``re``)."""

from __future__ import annotations

import re

_DECORATOR = re.compile(rb"@[ \t]*([A-Za-z_]\w*)[ \t]*\.[ \t]*tool(?:_plain)?\b")


def may_decorate_elsewhere(data: bytes) -> bool:
    """The bytes test: a ``@X.tool``/``@X.tool_plain`` decorator whose ``X`` the file
    imports by name (``from .agent import agent``, in parentheses too)."""
    if b".tool" not in data:
        return False
    names = {m.group(1) for m in _DECORATOR.finditer(data)}
    return any(
        re.search(rb"\bimport[ \t]+(?:\([^)]*|[^\n]*)\b" + re.escape(n) + rb"\b", data)
        for n in list(names)[:20]
    )
