"""What later releases of a parent declare for a child: the evidence behind a cap.

When a locked parent declares a range that starts below the child's locked major
(``claude-agent-sdk 0.2.95``: ``mcp>=1.23.0``, locked ``mcp 2.3.0``), the parent's later
releases may have tightened it (``0.2.100`` to ``0.2.139``: ``mcp<2.0.0``): the upstream's
own word that the new major broke it. This reads the ``Requires-Dist`` of those releases
from the index (wheel metadata only; nothing is built), capped per edge and per run, and
returns :class:`~agentguard.lock.graph.UpstreamBound` facts for the rules.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import threading
import zlib
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence

from packaging.metadata import parse_email
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from agentguard.findings import Source
from agentguard.lock.graph import PROJECT, LockGraph, UpstreamBound, major_key
from agentguard.lock.index import IndexClient, IndexError_, IndexFile, ProjectPage

LATER_RELEASES_PER_EDGE = 48  # the oldest later releases: where a tightening shows first
MAX_READS = 192  # metadata reads for this evidence, per run
MAX_SDIST_BYTES = 4 * 1024 * 1024  # an sdist read for its PKG-INFO (never built)
MAX_PKG_INFO_BYTES = 1024 * 1024
_HEX64 = re.compile(r"[0-9a-f]{64}")  # a cache file name is only ever a digest
_NAME = re.compile(r"\s*[A-Za-z0-9][A-Za-z0-9._-]*")  # a requirement's name


def _lower(specifier: str) -> Version | None:
    try:
        clauses = list(SpecifierSet(specifier))
    except InvalidSpecifier:
        return None
    for s in clauses:
        if s.operator in (">=", ">", "~="):
            try:
                return Version(s.version)
            except InvalidVersion:
                return None
    return None


def _metadata_file(files: Sequence[IndexFile]) -> IndexFile | None:
    """A file whose Requires-Dist is cheap to read without running anything: a wheel with a
    PEP 658 metadata file, a local wheel, or a small sdist (its PKG-INFO, read, not built)."""
    wheels = [f for f in files if f.is_wheel and (f.has_metadata or f.url.startswith("file:"))]
    wheels.sort(key=lambda f: (not f.filename.endswith("-none-any.whl"), f.filename))
    if wheels:
        return wheels[0]
    sdists = [
        f
        for f in files
        if f.filename.endswith(".tar.gz") and f.sha256 and (f.size or 0) <= MAX_SDIST_BYTES
    ]
    return sdists[0] if sdists else None


def read_requires(client: IndexClient, file: IndexFile) -> list[str]:
    """Requires-Dist of a wheel (the index client's cached read) or of an sdist's PKG-INFO
    when that metadata is static (Metadata-Version 2.2+, Requires-Dist not dynamic)."""
    if file.is_wheel:
        return client.requires_dist(file)
    if not _HEX64.fullmatch(str(file.sha256)):
        raise IndexError_(f"{file.filename}: no valid sha256", code="hash-missing", retryable=False)
    cache = client.cache_folder / "sdist-requires" / str(file.sha256)[:2] / f"{file.sha256}.json"
    try:
        cached = json.loads(cache.read_text("utf-8"))
        if isinstance(cached, list) and all(isinstance(x, str) for x in cached):
            return cached
    except (OSError, ValueError):
        pass
    data = client.read_file(file, MAX_SDIST_BYTES)
    if hashlib.sha256(data).hexdigest() != file.sha256:
        raise IndexError_(
            f"{file.filename}: sha256 does not match the index",
            code="hash-mismatch",
            retryable=True,
        )
    out = _pkg_info_requires(data, file.filename)
    cache.parent.mkdir(parents=True, exist_ok=True)
    tmp = cache.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.write_text(json.dumps(out), "utf-8")
    os.replace(tmp, cache)
    return out


def _pkg_info_requires(data: bytes, filename: str) -> list[str]:
    """Requires-Dist from the sdist's top-level PKG-INFO (read from the archive in memory)."""
    import tarfile  # (only where a release publishes no wheel metadata)

    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tf:
            member = next(
                (
                    m
                    for m in tf
                    if m.isfile() and m.name.count("/") == 1 and m.name.endswith("/PKG-INFO")
                ),
                None,
            )
            if member is None or member.size > MAX_PKG_INFO_BYTES:
                raise IndexError_(
                    f"{filename}: no PKG-INFO", code="metadata-unreadable", retryable=False
                )
            raw = tf.extractfile(member)
            text = raw.read(MAX_PKG_INFO_BYTES).decode("utf-8", "replace") if raw else ""
    except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
        raise IndexError_(
            f"{filename}: not a readable sdist ({exc})", code="metadata-unreadable", retryable=False
        ) from None
    meta, _ = parse_email(text)
    dynamic = {str(d).lower() for d in meta.get("dynamic", []) or []}
    try:
        static = Version(str(meta.get("metadata_version") or "0")) >= Version("2.2")
    except InvalidVersion:
        static = False
    if not static or "requires-dist" in dynamic:
        raise IndexError_(
            f"{filename}: its PKG-INFO does not promise static Requires-Dist",
            code="metadata-dynamic",
            retryable=False,
        )
    out = []
    for line in meta.get("requires_dist", []) or []:
        try:
            Requirement(line)
        except InvalidRequirement:
            continue
        out.append(line)
    return out


def upstream_bounds(
    graph: LockGraph,
    released: Mapping[str, list[Version]],
    pages: Mapping[str, ProjectPage],
    client: IndexClient,
    gather: Callable[
        [Sequence[tuple[str, IndexFile]], Callable[[tuple[str, IndexFile]], list[str]]],
        Iterator[tuple[tuple[str, IndexFile], list[str] | IndexError_]],
    ],
    watched: Collection[str] | None = None,
) -> tuple[tuple[UpstreamBound, ...], list[Source]]:
    """The bounds later releases of each parent declare, for edges whose range starts below
    the child's locked major."""
    wanted: dict[tuple[str, str, str], str] = {}  # (parent, version, child) -> locked major
    for e in graph.edges:
        if e.parent == PROJECT or not e.parent_version or not e.admitted_majors:
            continue
        if len(e.admitted_majors) <= 1:
            continue
        if watched is not None and e.child not in watched and e.parent not in watched:
            continue  # the long tail: its fix is a plain cap, not worth reading releases for
        low = _lower(e.specifier)
        if low is None:
            continue
        for pin in graph.versions_of(e.child):
            try:
                locked = major_key(Version(pin.version))
            except InvalidVersion:
                continue
            if locked != major_key(low):
                wanted[(e.parent, e.parent_version, e.child)] = locked
    reads: list[tuple[str, IndexFile]] = []
    later: dict[tuple[str, str], list[str]] = {}  # (parent, locked version) -> later versions
    for parent, version, _child in sorted(wanted):
        page = pages.get(parent)
        if page is None or (parent, version) in later:
            continue
        try:
            base = Version(version)
        except InvalidVersion:
            continue
        newer = [v for v in released.get(parent, []) if v > base][:LATER_RELEASES_PER_EDGE]
        later[(parent, version)] = [str(v) for v in newer]
        for v in newer:
            f = _metadata_file(page.files_for(v))
            if f is not None and len(reads) < MAX_READS:
                reads.append((f"{parent}=={v}", f))
    if not reads:
        return (), []
    requires: dict[str, list[str]] = {}
    failed = 0
    for (label, _f), result in gather(reads, lambda item: read_requires(client, item[1])):
        if isinstance(result, IndexError_):
            failed += 1
        else:
            requires[label] = result
    sources: list[Source] = [
        Source.ok(
            "metadata",
            "later releases of locked parents",
            f"{len(requires)} read for the evidence behind caps"
            + (f"; {failed} could not be read (not cited)" if failed else ""),
        )
    ]
    out: list[UpstreamBound] = []
    for (parent, version, child), locked in sorted(wanted.items()):
        child_versions = [v for v in released.get(child, []) if major_key(v) == locked]
        groups: dict[str, list[str]] = {}
        for text in later.get((parent, version), []):
            upper = _excluding_upper(requires.get(f"{parent}=={text}"), child, child_versions)
            if upper is not None:
                groups.setdefault(upper, []).append(text)
        if groups:
            upper, versions = min(groups.items(), key=lambda kv: Version(kv[1][0]))
            out.append(UpstreamBound(parent, version, child, upper, tuple(versions)))
    return tuple(out), sources


def _excluding_upper(
    lines: Iterable[str] | None, child: str, locked_major: Sequence[Version]
) -> str | None:
    """The upper bound clauses of the release's requirement on ``child``, when they leave
    out every released version of the locked major."""
    for line in lines or ():
        head = _NAME.match(line)  # parse only the lines about the child (a few of hundreds)
        if head is None or canonicalize_name(head.group(0).strip()) != child:
            continue
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        if canonicalize_name(req.name) != child:
            continue
        uppers = [s for s in req.specifier if s.operator in ("<", "<=")]
        if not uppers or not locked_major:
            continue
        upper = SpecifierSet(",".join(str(u) for u in uppers))
        if not any(upper.contains(v, prereleases=True) for v in locked_major):
            return str(upper)
    return None
