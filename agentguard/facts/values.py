"""Values read from code or configuration, as the facts hold them.

A value read from code is one of:

* a plain value (``str``, ``int``, ``bool``, ``None``, a ``tuple`` for a list, a ``dict``);
* :class:`Unknown` -- could not be determined statically (a parameter, an environment
  variable, a call); rules treat it as "may be anything", never as safe or empty;
* :class:`PathSym` -- a path known only symbolically (the process's working directory,
  the folder of the source file, its parent...);
* :class:`OneOf` -- depends on a branch: each alternative is kept, none is picked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentguard.findings import JSONValue
from agentguard.redact import mask_value
from agentguard.secret_text import classify, redact_step, value_format


@dataclass(frozen=True)
class Unknown:
    expr: str  # the source text, shortened
    reason: str  # "function parameter", "environment variable HOME", "call to make()", ...

    def describe(self) -> str:
        return f"unknown ({self.reason}: `{self.expr}`)"


@dataclass(frozen=True)
class PathSym:
    """A path known by what it is, not by its text.

    ``base``: "process-cwd" (``"."``, ``os.getcwd()``, ``process.cwd()``), "source-dir"
    (the folder of the file that holds the code; ``up`` folders above it), "home", "temp"
    (a folder made at run time: ``tempfile.mkdtemp()``, ``gettempdir()``, a
    ``TemporaryDirectory`` entered with ``with``, pytest's ``tmp_path`` in a test).
    ``sub``: a relative path joined below it ("" = the folder itself).
    """

    base: str
    up: int = 0
    sub: str = ""

    def describe(self) -> str:
        if self.base == "source-dir":
            text = (
                "the folder of this source file"
                if self.up == 0
                else "the parent of this source file's folder"
                if self.up == 1
                else f"{self.up} folders above this source file's folder"
            )
        else:
            text = {
                "process-cwd": "the process's working directory",
                "source-file": "this source file",
                "home": "the home directory",
                "temp": "a temporary folder made at run time",
            }.get(self.base, self.base)
            if self.up:
                text = f"{self.up} folder(s) above {text}"
        if self.sub:
            text += f", subfolder {self.sub}"
        return text


@dataclass(frozen=True)
class OneOf:
    """The value depends on a branch: every alternative, in source order."""

    alternatives: tuple[Any, ...]


def alternatives(value: Any) -> list[Any]:
    """The possible values (one, or the alternatives of a :class:`OneOf`, flattened)."""
    if isinstance(value, OneOf):
        out: list[Any] = []
        for alt in value.alternatives:
            out.extend(alternatives(alt))
        return out
    return [value]


REDACTED = mask_value()  # the one mask of agentguard.redact


def _secret_text(text: str, key: str | None = None) -> bool:
    if value_format(text) is not None:
        return True
    return key is not None and classify(key, text) is not None


def to_json(value: Any, key: str | None = None) -> JSONValue:
    """JSON form of a value (unknowns and symbols described in words, secrets redacted:
    a string in a known key format, or under a name that says secret, becomes the mask)."""
    if isinstance(value, str):
        return REDACTED if _secret_text(value, key) else value
    if isinstance(value, Unknown):
        return {"unknown": value.reason, "expr": redact_text(value.expr)}
    if isinstance(value, PathSym):
        return {"path": value.describe()}
    if isinstance(value, OneOf):
        return {"one_of": [to_json(v) for v in value.alternatives]}
    if isinstance(value, tuple | list):
        return [to_json(v, key) for v in value]
    if isinstance(value, dict):
        return {str(k): to_json(v, str(k)) for k, v in value.items()}
    if isinstance(value, int | float | bool) or value is None:
        return value
    return repr(value)


def redact_text(text: str) -> str:
    text = redact_step(text)
    return " ".join(REDACTED if value_format(w.strip("'\",")) else w for w in text.split(" "))


def describe(value: Any) -> str:
    """Short text for messages."""
    if isinstance(value, Unknown):
        return redact_text(value.describe())
    if isinstance(value, PathSym):
        return value.describe()
    if isinstance(value, OneOf):
        return " or ".join(describe(v) for v in value.alternatives)
    if isinstance(value, tuple | list):
        return "[" + ", ".join(describe(v) for v in value) + "]"
    if isinstance(value, str):
        return repr(REDACTED) if _secret_text(value) else repr(value)
    if isinstance(value, dict):
        return (
            "{"
            + ", ".join(f"{k!r}: {describe(to_json(v, str(k)))}" for k, v in value.items())
            + "}"
        )
    return str(value)
