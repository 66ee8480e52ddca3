"""``pylock.toml`` (PEP 751) written by another tool (uv export, pip lock). Ours carries
``created-by = "agentguard"`` and is read by :mod:`agentguard.lock.lockfile` instead.
PEP 751 records no ranges, so every edge's specifier is read from the parent's
``Requires-Dist``; most writers record no edges at all."""

from __future__ import annotations

from typing import TYPE_CHECKING

from packaging.utils import canonicalize_name

from agentguard.lock.readers.interface import (
    ExistingLock,
    LockedFile,
    LockEdge,
    LockPin,
    LockReader,
    LockReadError,
    load_toml,
    table_lines,
)

if TYPE_CHECKING:
    from packaging.pylock import PackageSdist, PackageWheel

_OURS = 'created-by = "agentguard"'


class PylockReader(LockReader):
    format = "pylock.toml"
    filename = "pylock.toml"

    @staticmethod
    def claims(text: str) -> bool:
        """Not ours, and not an export of another lock (``agentguard lock --export``)."""
        return _OURS not in text and 'created-by = "agentguard-export"' not in text

    def read(self, text: str, path: str) -> ExistingLock:
        # (packaging.pylock where such a file is read: a project without one, or with ours
        # alone, is never read by this reader)
        from packaging.pylock import Pylock, PylockValidationError

        data = load_toml(text, path)
        try:
            lock = Pylock.from_dict(data)
        except (PylockValidationError, ValueError, TypeError) as exc:
            raise LockReadError(
                path, f"not a valid PEP 751 lock ({exc})", code="lockfile-invalid"
            ) from None
        lines = table_lines(text, "packages")
        pins: list[LockPin] = []
        for i, p in enumerate(lock.packages):
            line = lines[i] if i < len(lines) else None
            files: list[LockedFile] = []
            entries: list[PackageWheel | PackageSdist] = [*(p.wheels or [])]
            if p.sdist:
                entries.append(p.sdist)
            for w in entries:
                url = w.url or (str(w.path) if w.path else None)
                name = w.name or (url.rsplit("/", 1)[-1] if url else "")
                files.append(LockedFile(str(name), url, w.hashes.get("sha256")))
            if p.vcs is not None:
                kind = "git"
            elif p.directory is not None:
                kind = "local"
            elif p.archive is not None:
                kind = "url"
            else:
                kind = "registry"
            if kind == "registry" and not files:
                raise LockReadError(
                    path,
                    f"{p.name} names no wheel or sdist (cut short?)",
                    line=line,
                    code="lockfile-invalid",
                )
            if kind == "registry" and p.version is None:
                raise LockReadError(
                    path, f"{p.name} has no version", line=line, code="lockfile-invalid"
                )
            pins.append(
                LockPin(
                    name=canonicalize_name(p.name),
                    version=str(p.version) if p.version else "",
                    marker=str(p.marker) if p.marker else None,
                    hashes=tuple(sorted({f"sha256:{f.sha256}" for f in files if f.sha256})),
                    files=tuple(files),
                    index=p.index,
                    source=kind,
                    line=line,
                )
            )
        edges: list[LockEdge] = []
        recorded = any(p.dependencies for p in lock.packages)
        for p in lock.packages:
            for d in p.dependencies or []:
                child = d.get("name") if isinstance(d, dict) else None
                if isinstance(child, str):
                    edges.append(
                        LockEdge(
                            canonicalize_name(p.name),
                            str(p.version) if p.version else None,
                            canonicalize_name(child),
                        )
                    )
        return ExistingLock(
            path=path,
            format=self.format,
            created_by=lock.created_by,
            pins=tuple(pins),
            edges=tuple(edges),
            records_edges=recorded,
        )
