"""``poetry.lock``: Poetry's lock (TOML). It records each package's dependencies with the
range the package declares (Poetry read it from the package's own ``Requires-Dist``), so
its edges need no metadata read; its files carry hashes but no URLs."""

from __future__ import annotations

import re
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from agentguard.lock.readers.interface import (
    ExistingLock,
    LockedFile,
    LockEdge,
    LockPin,
    LockReader,
    LockReadError,
    load_toml,
    require,
    table_lines,
)


def _marker(value: Any) -> str | None:
    if isinstance(value, str):
        return value or None
    if isinstance(value, dict):  # Poetry 2: one marker per group
        parts = sorted({str(v) for v in value.values() if v})
        return (
            " or ".join(f"({p})" for p in parts)
            if len(parts) > 1
            else (parts[0] if parts else None)
        )
    return None


def _constraints(spec: Any) -> list[tuple[str, str | None]]:
    """(PEP 440 specifier, marker) for each constraint Poetry lists for one dependency."""
    # (the install records' module, where a poetry.lock is read)
    from agentguard.facts.installs import poetry_to_pep440

    items = spec if isinstance(spec, list) else [spec]
    out: list[tuple[str, str | None]] = []
    for item in items:
        if isinstance(item, str):
            out.append((poetry_to_pep440(item), None))
        elif isinstance(item, dict):
            version = item.get("version")
            out.append(
                (poetry_to_pep440(version) if isinstance(version, str) else "", item.get("markers"))
            )
    return out


# a name followed by a space or nothing: the name whether the rest parses or not (below)
_PLAIN_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?(?= |\Z)")


def _extra_dependency(item: str) -> str:
    """The package an ``[extras]`` entry (``"pytest (>=6) ; python_version < '3.9'"``) names.
    Parsing it as a requirement costs most of reading a large lock; a plain name followed by
    a space is the requirement's name when it parses and its first word when it does not."""
    plain = _PLAIN_NAME.match(item)
    if plain is not None:
        return plain[0]
    try:
        return Requirement(item.replace(" (", "(")).name
    except InvalidRequirement:
        return item.split(" ", 1)[0]


class PoetryLockReader(LockReader):
    format = "poetry.lock"
    filename = "poetry.lock"

    def read(self, text: str, path: str) -> ExistingLock:
        data = load_toml(text, path)
        meta = data.get("metadata")
        if not isinstance(meta, dict) or "content-hash" not in meta:
            raise LockReadError(
                path,
                "no [metadata] content-hash: not a poetry.lock, or cut short",
                code="lockfile-invalid",
            )
        legacy_files = meta.get("files", {}) if isinstance(meta.get("files"), dict) else {}
        raw = require(data.get("package", []), list, path, "[[package]]", None)
        lines = table_lines(text, "package")
        pins: list[LockPin] = []
        pending: list[tuple[LockPin, str, Any, int | None]] = []
        extras_of: dict[str, dict[str, set[str]]] = {}
        for i, pkg in enumerate(raw):
            line = lines[i] if i < len(lines) else None
            pkg = require(pkg, dict, path, "a [[package]] entry", line)
            name = canonicalize_name(require(pkg.get("name"), str, path, "package name", line))
            version = require(pkg.get("version"), str, path, f"{name}: version", line)
            source = pkg.get("source") if isinstance(pkg.get("source"), dict) else {}
            kind = {"git": "git", "directory": "local", "file": "url", "url": "url"}.get(
                str(source.get("type", "")), "registry"
            )
            entries = pkg.get("files", legacy_files.get(pkg.get("name"), []))
            files = []
            for f in require(entries, list, path, f"{name}: files", line):
                f = require(f, dict, path, f"{name}: a file entry", line)
                digest = str(f.get("hash", ""))
                sha = digest.split(":", 1)[1] if digest.startswith("sha256:") else None
                files.append(LockedFile(str(f.get("file", "")), None, sha))
            if kind == "registry" and not files:
                raise LockReadError(
                    path,
                    f"{name}=={version} lists no files (cut short?)",
                    line=line,
                    code="lockfile-invalid",
                )
            pin = LockPin(
                name=name,
                version=version,
                marker=_marker(pkg.get("markers")),
                hashes=tuple(sorted({f"sha256:{f.sha256}" for f in files if f.sha256})),
                files=tuple(files),
                index=str(source["url"]) if kind == "registry" and source.get("url") else None,
                source=kind,
                line=line,
                groups=tuple(str(g) for g in pkg.get("groups", []) if isinstance(g, str)),
            )
            pins.append(pin)
            deps = require(pkg.get("dependencies", {}), dict, path, f"{name}: dependencies", line)
            for child, spec in deps.items():
                pending.append((pin, canonicalize_name(child), spec, line))
            for extra, items in (pkg.get("extras") or {}).items():
                for item in items if isinstance(items, list) else []:
                    dep = canonicalize_name(_extra_dependency(str(item)))
                    extras_of.setdefault(name, {}).setdefault(dep, set()).add(extra)
        locked = {p.name for p in pins}
        edges: list[LockEdge] = []
        for parent, child, spec, _line in pending:
            if child not in locked:
                continue  # an optional dependency or one for another platform, not locked
            optional = any(
                isinstance(s, dict) and s.get("optional")
                for s in (spec if isinstance(spec, list) else [spec])
            )
            extras = (
                sorted(extras_of.get(parent.name, {}).get(child, set())) if optional else [None]
            )
            for specifier, marker in _constraints(spec):
                for extra in extras or [None]:
                    edges.append(
                        LockEdge(parent.name, parent.version, child, marker, specifier, extra)
                    )
        version = str(meta.get("lock-version", "?"))
        written_by = _WRITTEN_BY.match(text)
        return ExistingLock(
            path=path,
            format=self.format,
            created_by=f"poetry (lock-version {version})",
            pins=tuple(pins),
            edges=tuple(edges),
            records_edges=True,
            content_hash=str(meta.get("content-hash")),
            tool_version=written_by[1] if written_by else None,
        )


# "# This file is automatically @generated by Poetry 2.1.3 and should not be changed by hand."
_WRITTEN_BY = re.compile(r"#[^\n]*\bPoetry ([0-9][^ \n]*)")
