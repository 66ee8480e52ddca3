"""``uv.lock``: uv's universal lock (TOML, one ``[[package]]`` per locked distribution)."""

from __future__ import annotations

from typing import Any

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

_LOCAL = ("editable", "virtual", "directory", "path")


def _source_kind(source: dict[str, Any]) -> tuple[str, str | None]:
    if "registry" in source:
        return "registry", str(source["registry"])
    if any(k in source for k in _LOCAL):
        return "local", None
    if "git" in source:
        return "git", None
    if "url" in source:
        return "url", None
    return "unknown", None


def _file(entry: Any, path: str, line: int | None) -> LockedFile:
    entry = require(entry, dict, path, "a wheel or sdist entry", line)
    url = entry.get("url") or entry.get("path")
    name = entry.get("filename") or (str(url).rsplit("/", 1)[-1] if url else "")
    digest = entry.get("hash")
    sha = (
        digest.split(":", 1)[1]
        if isinstance(digest, str) and digest.startswith("sha256:")
        else None
    )
    return LockedFile(str(name), str(url) if url else None, sha)


def _requirement(item: Any, path: str, line: int | None) -> str:
    item = require(item, dict, path, "a requires-dist entry", line)
    name = require(item.get("name"), str, path, "a requires-dist name", line)
    extras = item.get("extras") or []
    text = name + (f"[{','.join(extras)}]" if extras else "") + str(item.get("specifier") or "")
    if item.get("marker"):
        text += f" ; {item['marker']}"
    return str(text)


class UvLockReader(LockReader):
    format = "uv.lock"
    filename = "uv.lock"

    def read(self, text: str, path: str) -> ExistingLock:
        data = load_toml(text, path)
        if not isinstance(data.get("version"), int):
            raise LockReadError(
                path,
                "no lock `version`: not a uv.lock, or cut short",
                line=1,
                code="lockfile-invalid",
            )
        raw = data.get("package", [])
        raw = require(raw, list, path, "[[package]]", None)
        lines = table_lines(text, "package")
        pins: list[LockPin] = []
        deps: list[tuple[int, LockPin, dict[str, Any], str | None]] = []
        root_requires: tuple[str, ...] | None = None
        root_dev: tuple[str, ...] = ()
        root_name: str | None = None
        members: list[tuple[str, tuple[str, ...]]] = []
        for i, pkg in enumerate(raw):
            line = lines[i] if i < len(lines) else None
            pkg = require(pkg, dict, path, "a [[package]] entry", line)
            name = canonicalize_name(require(pkg.get("name"), str, path, "package name", line))
            source = require(pkg.get("source", {}), dict, path, f"{name}: source", line)
            kind, index = _source_kind(source)
            version = pkg.get("version")
            if not isinstance(version, str):
                if kind != "local":
                    raise LockReadError(
                        path,
                        f"{name} has no version (cut short?)",
                        line=line,
                        code="lockfile-invalid",
                    )
                version = ""
            files = [_file(w, path, line) for w in pkg.get("wheels", []) or []]
            if "sdist" in pkg:
                files.append(_file(pkg["sdist"], path, line))
            if kind == "registry" and not files:
                raise LockReadError(
                    path,
                    f"{name}=={version} names no wheel or sdist (cut short?)",
                    line=line,
                    code="lockfile-invalid",
                )
            forks = pkg.get("resolution-markers") or []
            marker = (
                " or ".join(f"({m})" for m in forks)
                if len(forks) > 1
                else (forks[0] if forks else None)
            )
            pin = LockPin(
                name=name,
                version=version,
                marker=marker,
                hashes=tuple(sorted({f"sha256:{f.sha256}" for f in files if f.sha256})),
                files=tuple(files),
                index=index,
                source=kind,
                line=line,
            )
            pins.append(pin)
            for d in pkg.get("dependencies", []) or []:
                deps.append((i, pin, require(d, dict, path, f"{name}: a dependency", line), None))
            optional = pkg.get("optional-dependencies", {}) or {}
            for extra, items in require(
                optional, dict, path, f"{name}: optional-dependencies", line
            ).items():
                for d in items:
                    deps.append(
                        (i, pin, require(d, dict, path, f"{name}: a dependency", line), extra)
                    )
            if kind == "local":
                meta = pkg.get("metadata", {}) or {}
                reqs = tuple(
                    _requirement(r, path, line)
                    for r in require(
                        meta.get("requires-dist", []), list, path, "requires-dist", line
                    )
                )
                if source.get("editable") == "." or source.get("virtual") == ".":
                    root_requires = reqs
                    root_name = name
                    groups = require(meta.get("requires-dev", {}), dict, path, "requires-dev", line)
                    root_dev = tuple(
                        _requirement(r, path, line)
                        for items in groups.values()
                        for r in require(items, list, path, "requires-dev", line)
                    )
                else:
                    members.append((name, reqs))
        by_name: dict[str, list[LockPin]] = {}
        for p in pins:
            by_name.setdefault(p.name, []).append(p)
        edges: list[LockEdge] = []
        for i, parent, d, extra in deps:
            line = lines[i] if i < len(lines) else None
            child = canonicalize_name(require(d.get("name"), str, path, "a dependency name", line))
            candidates = by_name.get(child, [])
            wanted = d.get("version")
            if not candidates or (wanted and not any(c.version == wanted for c in candidates)):
                raise LockReadError(
                    path,
                    f"{parent.name} depends on {child}{'==' + wanted if wanted else ''}, "
                    "which the lock does not hold (cut short?)",
                    line=line,
                    code="lockfile-invalid",
                )
            edges.append(
                LockEdge(
                    parent.name,
                    parent.version or None,
                    child,
                    marker=d.get("marker"),
                    extra=extra,
                )
            )
        if root_name is None:  # a virtual workspace root: its groups are in [manifest]
            manifest = require(data.get("manifest", {}), dict, path, "[manifest]", None)
            groups = require(
                manifest.get("dependency-groups", {}), dict, path, "manifest groups", None
            )
            root_dev = tuple(
                _requirement(r, path, None)
                for items in groups.values()
                for r in require(items, list, path, "manifest groups", None)
            )
        return ExistingLock(
            path=path,
            format=self.format,
            created_by="uv",
            pins=tuple(pins),
            edges=tuple(edges),
            records_edges=True,
            root_requires=root_requires,
            member_requires=tuple(members),
            root_requires_dev=root_dev,
            root=root_name,
        )
