"""Saved images on disk: a ``docker save`` / OCI tarball read by seeking, or an OCI layout folder.

The outer tarball is indexed by walking its headers (bodies skipped by offset), the small
JSON files are read first, then the layers in chain order. A gzip- or zstd-compressed outer
tarball cannot be seeked; it goes through the one-pass stream reader instead.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from concurrent.futures import Future
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from agentguard.findings import Source
from agentguard.inspect.image.agentplan import AgentPlan, link_wants_of, union
from agentguard.inspect.image.bytestreams import (
    OUT_CHUNK,
    PLAIN_CHUNK,
    Budget,
    ByteReader,
    ChunkSource,
    FdRegion,
    HashingSource,
    sniff_compression,
)
from agentguard.inspect.image.hashing import Hasher, RegionHashes
from agentguard.inspect.image.imageconfig import parse_digest
from agentguard.inspect.image.layerscan import Budgets, LayerScan, decompressed, scan_layer
from agentguard.inspect.image.layout import LayerRef
from agentguard.inspect.image.limits import (
    DEFAULT_LIMITS,
    Limits,
    ReadFailure,
    cap_hit,
    truncated,
)
from agentguard.inspect.image.resolve import resolve
from agentguard.inspect.image.result import ImageRead, LayerOutcome, assemble, failed, plan_of
from agentguard.inspect.image.tarwalk import TarWalker, display, follow_links


@dataclass(frozen=True)
class Member:
    offset: int
    size: int  # declared
    present: int  # bytes of it actually in the file
    kind: str
    link: str | None


@dataclass(frozen=True)
class Region:
    fd: int
    start: int
    size: int
    present: int


class OuterTar:
    """The members of a saved tarball: name -> where its body is. Links resolved inside only."""

    def __init__(self, fd: int, file_size: int, limits: Limits) -> None:
        self.fd = fd
        self.limits = limits
        self.members: dict[str, Member] = {}
        self.failure: ReadFailure | None = None
        self.rejected: list[str] = []
        reader = ByteReader(FdRegion(fd, 0, file_size), Budget(None), PLAIN_CHUNK)
        walker = TarWalker(
            reader, max_entries=limits.max_outer_entries, max_header_bytes=limits.max_header_bytes
        )
        try:
            for e in walker:
                if e.name is None:
                    self.rejected.append(f"{display(e.raw_name)}: {e.error}")
                    continue
                present = max(0, min(e.size, file_size - walker.body_offset))
                self.members[e.name] = Member(walker.body_offset, e.size, present, e.kind, e.link)
        except ReadFailure as exc:
            cut = [n for n, m in self.members.items() if m.present < m.size]
            where = f" inside {display(cut[-1])}" if cut else ""
            self.failure = ReadFailure(exc.code, f"the archive is cut short{where}: {exc.reason}")

    def _lookup(self, name: str) -> Member | None:
        def kind_link(n: str) -> tuple[str, str | None] | None:
            m = self.members.get(n)
            return (m.kind, m.link) if m else None

        found = follow_links(name, kind_link, self.limits.max_link_hops)
        return self.members[found] if found is not None else None

    def has(self, name: str) -> bool:
        return self._lookup(name) is not None

    def read_small(self, name: str, limit: int) -> bytes:
        region = self._region(name)
        if region.size > limit:
            raise cap_hit("json-bytes", f"{name} is {region.size} bytes (max_json_bytes cap)")
        if region.present < region.size:
            raise truncated(f"the archive holds {region.present} of {name}'s {region.size} bytes")
        try:
            return os.pread(self.fd, region.size, region.start)
        except OSError as exc:
            raise ReadFailure("read-error", f"reading {name} failed: {exc}") from None

    @contextmanager
    def layer(self, name: str) -> Iterator[Region]:
        yield self._region(name)

    def _region(self, name: str) -> Region:
        m = self._lookup(name)
        if m is None:
            raise ReadFailure("blob-missing", f"{name} is not in the archive")
        return Region(self.fd, m.offset, m.size, m.present)


class FolderBlobs:
    """An OCI image layout folder. Symlinks leading outside the folder are refused."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()

    def _path(self, name: str) -> Path:
        path = self.root / name
        try:
            real = path.resolve(strict=True)
        except (OSError, RuntimeError):
            raise ReadFailure("blob-missing", f"{name} is not in the folder") from None
        if not real.is_relative_to(self.root):
            raise ReadFailure("link-outside-image", f"{name} links outside the image folder")
        if not real.is_file():
            raise ReadFailure("blob-missing", f"{name} is not a regular file")
        return real

    def has(self, name: str) -> bool:
        return os.path.lexists(self.root / name)

    def read_small(self, name: str, limit: int) -> bytes:
        path = self._path(name)
        try:
            with path.open("rb") as f:
                data = f.read(limit + 1)
        except OSError as exc:
            raise ReadFailure("read-error", f"reading {name} failed: {exc}") from None
        if len(data) > limit:
            raise cap_hit("json-bytes", f"{name} is larger than {limit} bytes (max_json_bytes cap)")
        return data

    @contextmanager
    def layer(self, name: str) -> Iterator[Region]:
        path = self._path(name)
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError as exc:
            raise ReadFailure("read-error", f"opening {name} failed: {exc}") from None
        try:
            size = os.fstat(fd).st_size
            yield Region(fd, 0, size, size)
        finally:
            os.close(fd)


def raw_hash_algorithm(region: Region, ref: LayerRef) -> str | None:
    """The algorithm to hash a layer's stored bytes with, None when nothing can check them."""
    comp = sniff_compression(os.pread(region.fd, 8, region.start) if region.present else b"")
    if ref.blob_digest:
        return parse_digest(ref.blob_digest)[0]
    return "sha256" if comp == "none" else None  # a plain tar's digest is its diff_id


def scan_region(
    region: Region,
    ref: LayerRef,
    diff_id: str | None,
    workdirs: tuple[str, ...],
    budgets: Budgets,
    hashes: RegionHashes | None,
    raw_future: Future[str] | None = None,
    plan: AgentPlan | None = None,
) -> LayerScan:
    """Scan one layer stored in a file region; plain bodies are skipped by offset.

    With ``hashes`` (verification on) the stored bytes are hashed on the pool, reading the
    same pages (``raw_future`` when the caller already started it); the digests may still
    be running when this returns: :meth:`LayerScan.finish_hashing` waits for them."""
    limits = budgets.limits
    scan = LayerScan(key=ref.path, workdirs=workdirs, plan=plan)
    fd, start, present = region.fd, region.start, region.present
    try:
        comp = sniff_compression(os.pread(fd, 8, start) if present else b"")
        raw_alg = raw_hash_algorithm(region, ref)
        data_alg = parse_digest(diff_id)[0] if diff_id else "sha256"
    except (OSError, ReadFailure) as exc:
        scan.failure = exc if isinstance(exc, ReadFailure) else ReadFailure("read-error", str(exc))
        return scan
    scan.compression = comp
    if hashes is not None and raw_alg is not None:
        scan.raw_future = raw_future or hashes.submit(fd, start, present, raw_alg)
    if hashes is not None and raw_alg is None and diff_id:
        scan.data_hasher = Hasher(data_alg)
    src: ChunkSource = decompressed(FdRegion(fd, start, present), comp, limits)
    if scan.data_hasher is not None:
        src = HashingSource(src, scan.data_hasher)
    reader = ByteReader(src, budgets.bytes, PLAIN_CHUNK if comp == "none" else OUT_CHUNK)
    scan_layer(reader, scan, budgets)
    if scan.data_hasher is not None and scan.failure is None:
        try:
            # The rest after the tar end marker counts too (for the digest and the cap: a
            # hostile layer may hide gigabytes of zeros behind its end marker).
            while data := src.chunk(OUT_CHUNK):
                budgets.bytes.charge(len(data))
        except ReadFailure as exc:
            scan.failure = exc
    if present < region.size and scan.failure is None:
        scan.failure = truncated(f"the archive holds {present} of the layer's {region.size} bytes")
    if scan.failure is not None:
        scan.finish_hashing()
    return scan


class _ChunkFile:
    """A read()-able view of a chunk source (a compressed tarball fed to the stream reader)."""

    def __init__(self, src: ChunkSource) -> None:
        self._src = src

    def read(self, size: int = -1) -> bytes:
        return self._src.chunk(OUT_CHUNK if size < 0 else size)


def read_image_archive(
    path: Path,
    *,
    target: str,
    platform: str | None = None,
    limits: Limits = DEFAULT_LIMITS,
    extra_plans: Sequence[AgentPlan] = (),
) -> ImageRead:
    """Read a saved image: a docker save tarball (classic or OCI-style), an OCI layout tar or
    folder. Never raises for a bad image: every problem is a failed source.

    ``extra_plans``: agent files collected for besides the config's own (where links lead:
    a second read after the first showed the links)."""
    if path.is_dir():
        blobs = FolderBlobs(path)
        sources = [Source.ok("image-archive", target, "OCI image layout folder")]
        return _read(blobs, target, platform, limits, sources, extra_plans)
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as exc:
        err = ReadFailure("archive-unreadable", f"cannot open {path}: {exc.strerror}")
        return ImageRead(None, (failed("image-archive", target, err),))
    try:
        size = os.fstat(fd).st_size
        comp = sniff_compression(os.pread(fd, 8, 0))
        if comp != "none":
            from agentguard.inspect.image.stream import read_image_stream

            raw = decompressed(FdRegion(fd, 0, size), comp, limits)
            return read_image_stream(
                _ChunkFile(raw),  # type: ignore[arg-type]
                target=target,
                platform=platform,
                limits=limits,
                extra_plans=extra_plans,
            )
        outer = OuterTar(fd, size, limits)
        if outer.failure is not None:
            sources = [failed("image-archive", target, outer.failure)]
        else:
            sources = [Source.ok("image-archive", target, f"{len(outer.members)} members")]
        sources += [
            Source.failed(
                "image-archive", target, f"member rejected: {r}", error_code="entry-name-rejected"
            )
            for r in outer.rejected[: limits.max_entry_sources]
        ]
        return _read(outer, target, platform, limits, sources, extra_plans)
    finally:
        os.close(fd)


def _start_hashes(
    blobs: OuterTar | FolderBlobs, outcomes: list[LayerOutcome], hashes: RegionHashes
) -> dict[str, Future[str]]:
    """Start the stored-bytes digests before the walk, largest layer first: the largest
    layer's digest is what the whole read waits for."""
    jobs: list[tuple[int, str, Region, str]] = []
    with ExitStack() as stack:
        for path in dict.fromkeys(o.ref.path for o in outcomes):
            ref = next(o.ref for o in outcomes if o.ref.path == path)
            try:
                region = stack.enter_context(blobs.layer(path))
                algorithm = raw_hash_algorithm(region, ref)
            except (OSError, ReadFailure):
                continue  # the scan of this layer reports it
            if algorithm is not None:
                jobs.append((region.present, path, region, algorithm))
        jobs.sort(key=lambda job: -job[0])
        return {
            path: hashes.submit(region.fd, region.start, region.present, algorithm)
            for _, path, region, algorithm in jobs
        }


def _read(
    blobs: OuterTar | FolderBlobs,
    target: str,
    platform: str | None,
    limits: Limits,
    sources: list[Source],
    extra_plans: Sequence[AgentPlan] = (),
) -> ImageRead:
    resolved = resolve(blobs, platform, limits, sources)
    if resolved is None:
        return ImageRead(None, tuple(sources))
    workdirs = (resolved.parsed.workdir,) if resolved.parsed else ()
    plan = union([plan_of(resolved.parsed), *extra_plans]) if resolved.parsed else None
    budgets = Budgets(limits)
    done: dict[str, LayerScan] = {}
    hashes = RegionHashes() if limits.verify_layer_digests else None
    try:
        started = _start_hashes(blobs, resolved.outcomes, hashes) if hashes else {}
        for o in resolved.outcomes:
            if o.ref.path in done:
                o.scan = done[o.ref.path]
                continue
            try:
                with blobs.layer(o.ref.path) as region:
                    o.scan = scan_region(
                        region,
                        o.ref,
                        o.diff_id,
                        workdirs,
                        budgets,
                        hashes,
                        started.get(o.ref.path),
                        plan,
                    )
            except ReadFailure as exc:
                o.failure = exc
                continue
            done[o.ref.path] = o.scan
        for scan in done.values():
            scan.finish_hashing()
    finally:
        if hashes is not None:
            hashes.close()
    return assemble(
        target=target,
        layout=resolved.layout,
        chosen=resolved.chosen,
        parsed=resolved.parsed,
        image_id=resolved.image_id,
        outcomes=resolved.outcomes,
        limits=limits,
        listing_truncated=budgets.listing_truncated,
        sources=sources,
        plan=plan,
        link_wants=link_wants_of(extra_plans),
        links_truncated=budgets.links_truncated,
    )
