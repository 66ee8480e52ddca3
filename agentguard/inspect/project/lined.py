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


# What a parser of hostile text may raise besides its own error type: ValueError (a
# 4301-digit integer exceeds Python's int-string limit in json, tomllib and the YAML
# constructor alike), RecursionError (nesting), UnicodeError, OverflowError (a float),
# MemoryError, and the errors of an odd value where a parser assumed another type.
PARSE_FAILURES: tuple[type[BaseException], ...] = (
    ValueError,
    RecursionError,
    UnicodeError,
    OverflowError,
    MemoryError,
    TypeError,
    KeyError,
    IndexError,
    AttributeError,
)


def document_error(exc: BaseException) -> DocumentError:
    """Any failure to parse one document, as that document's error (one file's failure
    is that file's failed source, never the step's, never a usage error)."""
    if isinstance(exc, DocumentError):
        return exc
    if isinstance(exc, RecursionError):
        return DocumentError("nested too deeply to read", code="too-deep")
    if isinstance(exc, MemoryError):
        return DocumentError("too large to read", code="too-large")
    detail = str(exc).splitlines()[0] if str(exc) else ""
    if "int_max_str_digits" in detail or "Exceeds the limit" in detail:
        return DocumentError(
            "a number too long to read (Python refuses integers of more than 4300 digits)",
            code="number-too-long",
        )
    return DocumentError(f"cannot be parsed: {type(exc).__name__}: {detail}"[:300], code="parse")


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
