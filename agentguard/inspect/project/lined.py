"""A parsed document with the line of every value, for file:line evidence.

The YAML (compose) and JSONC (devcontainer) readers both produce a :class:`LinedDoc`:
plain Python values plus a map from a value's path (keys and list indexes) to its line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

KeyPath = tuple[str | int, ...]


class DocumentError(ValueError):
    """The document could not be read; ``line`` is where, when known."""

    def __init__(self, message: str, line: int | None = None, code: str = "syntax") -> None:
        super().__init__(message)
        self.line = line
        self.code = code


@dataclass(frozen=True)
class LinedDoc:
    value: Any
    lines: dict[KeyPath, int] = field(default_factory=dict)

    def line(self, *path: str | int) -> int | None:
        """The line of ``path``, or of its nearest ancestor that has one."""
        p: KeyPath = tuple(path)
        while True:
            if p in self.lines:
                return self.lines[p]
            if not p:
                return None
            p = p[:-1]


# Limits for every reader: inputs are untrusted and small files are the norm.
MAX_NODES = 200_000  # values materialised, aliases counted each time they are expanded
MAX_DEPTH = 100
