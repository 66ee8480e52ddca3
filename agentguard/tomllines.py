"""Lines of the values in a TOML file, indexed once (TOML parsers carry no positions).

Looking a value up by scanning every line is quadratic over a file of many dependencies
(60k entries never finished); this index is built in one pass and answers in constant time.
"""

from __future__ import annotations

import re

_QUOTED = re.compile(r"\"((?:[^\"\\\n]|\\.)*)\"|'([^'\n]*)'")
_KEY = re.compile(r"^\s*[\"']?([^\"'=\s]+)[\"']?\s*=")


class TomlLines:
    """Where each quoted string and each ``key =`` of a TOML text sits."""

    def __init__(self, text: str) -> None:
        self._quoted: dict[str, list[int]] = {}
        self._keys: dict[str, list[int]] = {}
        self._used: dict[str, int] = {}
        for n, line in enumerate(text.splitlines(), 1):
            if "=" in line and (key := _KEY.match(line)):
                self._keys.setdefault(key.group(1), []).append(n)
            if '"' not in line and "'" not in line:
                continue
            for m in _QUOTED.finditer(line):
                value = m.group(1) if m.group(1) is not None else m.group(2)
                at = self._quoted.setdefault(value, [])
                if not at or at[-1] != n:
                    at.append(n)

    def first(self, value: str) -> int | None:
        """The first line holding ``value`` as a quoted string."""
        at = self._quoted.get(value)
        return at[0] if at else None

    def next(self, value: str) -> int | None:
        """The next line (after those already handed out) holding ``value`` quoted."""
        at = self._quoted.get(value, [])
        n = self._used.get(value, 0)
        if n >= len(at):
            return None
        self._used[value] = n + 1
        return at[n]

    def key(self, key: str) -> int | None:
        """The line of ``key =`` when exactly one line sets it."""
        at = self._keys.get(key, [])
        return at[0] if len(at) == 1 else None
