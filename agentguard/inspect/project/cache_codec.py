"""What one project file holds (its facts), as JSON and back, for the content cache.

Plain JSON, never pickle: reading an entry builds values of agentguard's own record
types only, field by field, and nothing else. Every value that is not a JSON scalar or a
list is a tagged object (``{"t": [...]}`` a tuple, ``{"c": "module:Name", "a": {...}}``
a record), so a tuple stays a tuple and a frozen record compares equal to the one that
was stored. A value of any other type is not encodable (:class:`Uncacheable`): its file
is then not cached, never stored lossily. Decoding anything unexpected raises
:class:`BadEntry`; the cache treats that entry as missing.
"""

from __future__ import annotations

import base64
import dataclasses
import enum
import sys
from typing import Any

JSON = Any  # (a JSON value: None, bool, int, float, str, list, dict)
_SCALARS = (str, int, float, bool, type(None))
# modules whose record and enum types an entry may name (facts, findings, sources)
_TRUSTED_MODULES = ("agentguard.inspect.", "agentguard.facts", "agentguard.findings")
_MAX_DEPTH = 200


class Uncacheable(TypeError):
    """A value the codec does not store (its file is computed every run)."""


class BadEntry(ValueError):
    """An entry that does not decode to agentguard's own records (ignored, recomputed)."""


def _name(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def encode(value: object, depth: int = 0) -> JSON:
    if depth > _MAX_DEPTH:
        raise Uncacheable("nested too deeply")
    if isinstance(value, _SCALARS) and not isinstance(value, enum.Enum):
        return value
    d = depth + 1
    if type(value) is list:
        return [encode(v, d) for v in value]
    if type(value) is tuple:
        return {"t": [encode(v, d) for v in value]}
    if type(value) is frozenset or type(value) is set:
        tag = "f" if type(value) is frozenset else "s"
        return {tag: [encode(v, d) for v in value]}
    if type(value) is dict:
        return {"d": [[encode(k, d), encode(v, d)] for k, v in value.items()]}
    if type(value) is bytes:
        return {"b": base64.b64encode(value).decode("ascii")}
    cls = type(value)
    if not cls.__module__.startswith(_TRUSTED_MODULES):
        raise Uncacheable(_name(cls))
    if isinstance(value, enum.Enum):
        return {"e": _name(cls), "v": encode(value.value, d)}
    if dataclasses.is_dataclass(value):
        fields = dataclasses.fields(value)
        if any(not f.init for f in fields):
            raise Uncacheable(f"{_name(cls)}: a field set after construction")
        return {"c": _name(cls), "a": {f.name: encode(getattr(value, f.name), d) for f in fields}}
    raise Uncacheable(_name(cls))


def _class(name: object) -> type:
    """A record or enum type of agentguard's own, already imported; never an import."""
    if not isinstance(name, str) or name.count(":") != 1:
        raise BadEntry("not a type name")
    module, qualname = name.split(":")
    if not module.startswith(_TRUSTED_MODULES) or "." in qualname:
        raise BadEntry(f"not one of agentguard's records: {name[:80]}")
    cls = getattr(sys.modules.get(module), qualname, None)
    if not isinstance(cls, type) or (
        not dataclasses.is_dataclass(cls) and not issubclass(cls, enum.Enum)
    ):
        raise BadEntry(f"not one of agentguard's records: {name[:80]}")
    if cls.__module__ != module:
        raise BadEntry(f"not defined where it says: {name[:80]}")
    return cls


def decode(value: JSON, depth: int = 0) -> Any:
    if depth > _MAX_DEPTH:
        raise BadEntry("nested too deeply")
    if isinstance(value, _SCALARS):
        return value
    d = depth + 1
    if isinstance(value, list):
        return [decode(v, d) for v in value]
    if not isinstance(value, dict) or not 1 <= len(value) <= 2:
        raise BadEntry("not an encoded value")
    try:
        if len(value) == 1:
            ((tag, body),) = value.items()
            if tag == "b":
                return base64.b64decode(_str(body), validate=True)
            items = [decode(v, d) for v in _list(body)]
            if tag == "t":
                return tuple(items)
            if tag == "f":
                return frozenset(items)
            if tag == "s":
                return set(items)
            if tag == "d":
                return dict(_pair(p) for p in items)
            raise BadEntry(f"unknown tag {tag[:20]!r}")
        if "e" in value and "v" in value:
            cls = _class(value["e"])
            if not issubclass(cls, enum.Enum):
                raise BadEntry("not an enum")
            return cls(decode(value["v"], d))
        if "c" in value and "a" in value:
            cls = _class(value["c"])
            args = value["a"]
            if not isinstance(args, dict) or issubclass(cls, enum.Enum):
                raise BadEntry("not a record")
            names = {f.name for f in dataclasses.fields(cls) if f.init}  # type: ignore[arg-type]
            if set(args) != names:
                raise BadEntry(f"{value['c'][:80]}: other fields than the record's")
            return cls(**{k: decode(v, d) for k, v in args.items()})
    except BadEntry:
        raise
    except Exception as exc:  # (a record's own checks, an unhashable key, bad base64)
        raise BadEntry(f"does not decode: {type(exc).__name__}") from None
    raise BadEntry("not an encoded value")


def _str(value: object) -> str:
    if not isinstance(value, str):
        raise BadEntry("not a string")
    return value


def _list(value: object) -> list[Any]:
    if not isinstance(value, list):
        raise BadEntry("not a list")
    return value


def _pair(value: object) -> tuple[Any, Any]:
    if not isinstance(value, list) or len(value) != 2:
        raise BadEntry("not a pair")
    return value[0], value[1]
