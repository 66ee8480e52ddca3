"""The shape of one package of an npm server's tree, checked field by field: read from the
``package-lock.json`` npm wrote (hostile data: the registry chose every name, version,
URL and edge in it) and from the tree ``mcp.lock.json`` records (the pull request's file).

Every value has a type, a length and a form, or the package is refused (:class:`ShapeError`,
a failed source): a path is ``node_modules/NAME`` nested at most :data:`MAX_NESTING`
deep, each name one npm name (no ``..``, no separator, no control character), so no path
npm or a reader builds from it leaves the folder it belongs in."""

from __future__ import annotations

import json
import re
from typing import Any

from agentguard.facts.npm_tree import EDGE_FIELDS, KIT_FIELDS, TreePackage

MAX_NESTING = 32  # node_modules/a/node_modules/b/... levels
MAX_PATH = 4096
MAX_EDGES = 4096  # dependencies of one package
MAX_TREE_PACKAGES = 20_000  # packages of one tree
_SEGMENT = r"(?:@[A-Za-z0-9~-][A-Za-z0-9._~-]{0,213}/)?[A-Za-z0-9~-][A-Za-z0-9._~-]{0,213}"
NAME = re.compile(rf"^{_SEGMENT}\Z")
PATH = re.compile(rf"^node_modules/{_SEGMENT}(?:/node_modules/{_SEGMENT})*\Z")
VERSION = re.compile(r"^v?[0-9][0-9A-Za-z.+-]{0,255}\Z")
_HASH = r"(?:sha1|sha256|sha384|sha512)-[A-Za-z0-9+/]{16,128}={0,2}(?:\?[!-~]{0,64})?"
INTEGRITY = re.compile(rf"^{_HASH}(?: {_HASH}){{0,7}}\Z")
_PLATFORM = re.compile(r"^!?[A-Za-z0-9_.-]{1,64}\Z")
_BIN = re.compile(r"^(?:@[A-Za-z0-9._~-]{1,213}/)?[A-Za-z0-9._~+:-]{1,213}\Z")
_TEXT = re.compile(r"^[^\x00-\x1f\x7f]{1,4096}\Z")
_FLAGS = ("optional", "peer", "dev", "hasInstallScript", "link")
OWN_FIELDS = ("path", "version", "resolved", "integrity")


class ShapeError(ValueError):
    pass


def _text(value: object, what: str, pattern: re.Pattern[str] = _TEXT) -> str:
    # (a name or a path of these forms never holds a `..` segment: each segment starts
    # with a letter, a digit, `~` or `-`)
    if not isinstance(value, str) or not pattern.match(value):
        raise ShapeError(f"{what}: not a value of the expected form")
    return value


def _edges(value: object, what: str) -> dict[str, str]:
    if not isinstance(value, dict) or len(value) > MAX_EDGES:
        raise ShapeError(f"{what}: not a table of at most {MAX_EDGES} dependencies")
    return {
        _text(k, f"{what} (a name)", NAME): _text(v, f"{what}[{k!r}]") for k, v in value.items()
    }


def _meta_value(key: str, value: object, what: str) -> object:
    if key == "name":
        return _text(value, what, NAME)
    if key in EDGE_FIELDS:
        return _edges(value, what)
    if key == "peerDependenciesMeta":
        if not isinstance(value, dict) or len(value) > MAX_EDGES:
            raise ShapeError(f"{what}: not a table")
        out = {}
        for name, meta in value.items():
            _text(name, f"{what} (a name)", NAME)
            if not isinstance(meta, dict) or set(meta) - {"optional"}:
                raise ShapeError(f"{what}[{name!r}]: not {{optional}}")
            if not isinstance(meta.get("optional", False), bool):
                raise ShapeError(f"{what}[{name!r}].optional: not true or false")
            out[name] = dict(meta)
        return out
    if key in ("os", "cpu"):
        if not isinstance(value, list) or len(value) > 64:
            raise ShapeError(f"{what}: not a list of platforms")
        return [_text(v, what, _PLATFORM) for v in value]
    if key == "bin":
        if not isinstance(value, dict) or len(value) > 256:
            raise ShapeError(f"{what}: not a table of commands")
        out_bin = {}
        for k, v in value.items():
            target = _text(v, f"{what}[{k!r}]")
            if target.startswith(("/", "\\")) or ".." in re.split(r"[\\/]", target):
                raise ShapeError(f"{what}[{k!r}]: points out of its package")
            out_bin[_text(k, f"{what} (a command)", _BIN)] = target
        return out_bin
    if key in _FLAGS:
        if not isinstance(value, bool):
            raise ShapeError(f"{what}: not true or false")
        return value
    raise ShapeError(f"{what}: not a field of a tree package")  # pragma: no cover


def package(path: object, entry: object, where: str, *, strict: bool) -> TreePackage:
    """One package. ``strict``: a field this reader does not know is refused (the lock's
    own tree); else it is dropped (npm's package-lock carries license, engines...)."""
    path = _text(path, f"{where}: the path", PATH)
    assert isinstance(path, str)
    if len(path) > MAX_PATH or path.count("node_modules/") > MAX_NESTING:
        raise ShapeError(f"{where}: the path is nested deeper than {MAX_NESTING}")
    if not isinstance(entry, dict):
        raise ShapeError(f"{where}: not a table")
    if strict:
        unknown = set(entry) - set(OWN_FIELDS) - set(KIT_FIELDS)
        if unknown:
            raise ShapeError(f"{where}: fields a tree package does not have")
    version = entry.get("version")
    resolved = entry.get("resolved")
    integrity = entry.get("integrity")
    meta = []
    for key in KIT_FIELDS:
        if key in entry and entry[key] is not None:
            value = _meta_value(key, entry[key], f"{where}.{key}")
            if value is False:
                continue  # (a flag that is not set: as if absent)
            meta.append((key, json.dumps(value, sort_keys=True, ensure_ascii=False)))
    return TreePackage(
        path=path,
        version=None if version is None else _text(version, f"{where}.version", VERSION),
        resolved=None if resolved is None else _text(resolved, f"{where}.resolved"),
        integrity=None if integrity is None else _text(integrity, f"{where}.integrity", INTEGRITY),
        meta=tuple(meta),
    )


def as_dict(data: Any, what: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise ShapeError(f"{what}: not a table")
    return data
