"""One pass over a non-seekable saved-image stream (the engine's ``image.save()``).

Saved tarballs list members by name, so the config and ``manifest.json``/``index.json`` usually
come after (some of) the layers. JSON members are small and kept; a layer is scanned as it
passes once a config has been seen (collecting for the working directories of every config
seen so far), and only layers that arrive before any config are spooled to an anonymous
temporary file (bounded by ``max_image_bytes``) and scanned after the plan is known. Results
are keyed by member path; the chain order is applied once the manifest has arrived.
"""

from __future__ import annotations

import tempfile
from typing import IO, BinaryIO

from agentguard.findings import Source
from agentguard.inspect.image.archive import Region, scan_region
from agentguard.inspect.image.bytestreams import (
    OUT_CHUNK,
    RAW_CHUNK,
    Budget,
    ByteReader,
    ChunkSource,
    HashingSource,
    StreamSource,
    sniff_compression,
)
from agentguard.inspect.image.hashing import Hasher, RegionHashes
from agentguard.inspect.image.imageconfig import load_json, parse_config, parse_digest
from agentguard.inspect.image.layerscan import Budgets, LayerScan, decompressed, scan_layer
from agentguard.inspect.image.layout import digest_from_path
from agentguard.inspect.image.limits import (
    DEFAULT_LIMITS,
    Limits,
    ReadFailure,
    cap_hit,
    truncated,
)
from agentguard.inspect.image.resolve import resolve
from agentguard.inspect.image.result import RETRYABLE, ImageRead, assemble, failed
from agentguard.inspect.image.tarwalk import TarEntry, TarWalker, display, follow_links

SMALL_TEXT = 64 * 1024  # VERSION, repositories, oci-layout ...


class _Body:
    """The current member's body as a chunk source (after the sniffed head)."""

    def __init__(self, walker: TarWalker, head: bytes) -> None:
        self._walker = walker
        self._head = head

    def chunk(self, size: int) -> bytes:
        if self._head:
            data, self._head = self._head, b""
            return data
        return self._walker.read_body_some(size)

    def skip(self, n: int) -> int:
        done = 0
        while done < n:
            data = self.chunk(min(RAW_CHUNK, n - done))
            if not data:
                break
            done += len(data)
        return done


class _Smalls:
    """The small members kept from the stream, readable as the layout code expects."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.data: dict[str, bytes] = {}
        self.kinds: dict[str, tuple[str, str | None]] = {}  # every member: kind, link

    def _find(self, name: str) -> str | None:
        return follow_links(name, self.kinds.get, self.limits.max_link_hops)

    def has(self, name: str) -> bool:
        return self._find(name) is not None

    def read_small(self, name: str, limit: int) -> bytes:
        found = self._find(name)
        if found is None or found not in self.data:
            raise ReadFailure("blob-missing", f"{name} is not in the stream (or not small)")
        data = self.data[found]
        if len(data) > limit:
            raise cap_hit("json-bytes", f"{name} is {len(data)} bytes (max_json_bytes cap)")
        return data


def read_image_stream(
    fileobj: BinaryIO, *, target: str, platform: str | None = None, limits: Limits = DEFAULT_LIMITS
) -> ImageRead:
    """Read a saved image from a stream in one pass. Never raises for a bad image or a stream
    that fails: every problem is a failed source."""
    budgets = Budgets(limits)
    smalls = _Smalls(limits)
    scans: dict[str, LayerScan] = {}
    spools: dict[str, tuple[IO[bytes], int]] = {}
    member_failures: dict[str, ReadFailure] = {}
    workdirs: set[str] = set()
    sources: list[Source] = []
    # The stream itself is capped too: members the reader only skips (unknown kinds,
    # padding) would otherwise cost unbounded time behind a small compressed file.
    stream_budget = Budget(limits.max_stream_bytes, "stream-bytes", "the saved image stream")
    outer = ByteReader(StreamSource(fileobj), stream_budget, RAW_CHUNK)
    walker = TarWalker(
        outer, max_entries=limits.max_outer_entries, max_header_bytes=limits.max_header_bytes
    )
    kept = [0, 0]  # bytes of small members, of spools: against their caps
    try:
        try:
            for e in walker:
                _member(e, walker, smalls, scans, spools, member_failures, workdirs, budgets, kept)
            sources.append(Source.ok("image-archive", target, f"{walker.entries} members"))
        except ReadFailure as exc:
            sources.append(failed("image-archive", target, exc))
        return _finish(
            target, platform, limits, smalls, scans, spools, member_failures, budgets, sources
        )
    finally:
        for f, _ in spools.values():
            f.close()


def _member(
    e: TarEntry,
    walker: TarWalker,
    smalls: _Smalls,
    scans: dict[str, LayerScan],
    spools: dict[str, tuple[IO[bytes], int]],
    member_failures: dict[str, ReadFailure],
    workdirs: set[str],
    budgets: Budgets,
    kept: list[int],
) -> None:
    name = e.name
    if name is None:
        member_failures[display(e.raw_name)] = ReadFailure("entry-name-rejected", e.error or "")
        return
    if e.kind in ("symlink", "hardlink"):
        smalls.kinds[name] = (e.kind, e.link)
        return
    if e.kind != "file":
        return
    smalls.kinds[name] = ("file", None)
    try:
        _file_member(
            e, name, walker, smalls, scans, spools, member_failures, workdirs, budgets, kept
        )
    except ReadFailure as exc:  # the stream broke inside this member: name it, then stop
        member_failures.setdefault(name, exc)
        raise


def _file_member(
    e: TarEntry,
    name: str,
    walker: TarWalker,
    smalls: _Smalls,
    scans: dict[str, LayerScan],
    spools: dict[str, tuple[IO[bytes], int]],
    member_failures: dict[str, ReadFailure],
    workdirs: set[str],
    budgets: Budgets,
    kept: list[int],
) -> None:
    limits = budgets.limits
    head = walker.read_body(min(e.size, 512))
    comp = sniff_compression(head)
    is_json = head.lstrip()[:1] in (b"{", b"[")
    looks_tar = len(head) == 512 and (head[257:262] == b"ustar" or not head.strip(b"\0"))
    if (is_json and e.size <= limits.max_json_bytes) or (
        e.size <= SMALL_TEXT and comp == "none" and not looks_tar
    ):
        kept[0] += e.size
        if kept[0] > 4 * limits.max_json_bytes:
            member_failures[name] = cap_hit(
                "json-bytes",
                f"small members passed {4 * limits.max_json_bytes} bytes (4 x max_json_bytes)",
            )
            return
        data = head + walker.read_body(e.size - len(head))
        smalls.data[name] = data
        if is_json:
            _note_config(data, workdirs)
        return
    if workdirs:
        scans[name] = _scan_member(walker, name, head, comp, tuple(sorted(workdirs)), budgets)
        return
    if name in spools:  # a duplicate member: the last one wins
        spools.pop(name)[0].close()
    try:
        spools[name] = _spool(walker, head, e.size, kept, limits)
    except ReadFailure as exc:
        member_failures[name] = exc
        if exc.code == "stream-read-error":
            raise


def _spool(
    walker: TarWalker, head: bytes, declared: int, kept: list[int], limits: Limits
) -> tuple[IO[bytes], int]:
    """Copy one member to an anonymous temporary file (deleted when closed)."""
    spool = tempfile.TemporaryFile(prefix="agentguard-layer-")  # noqa: SIM115 - closed by the caller
    try:
        spool.write(head)
        size = len(head)
        while True:
            data = walker.read_body_some(RAW_CHUNK)
            if not data:
                break
            size += len(data)
            kept[1] += len(data)
            if kept[1] > limits.max_image_bytes:
                raise cap_hit(
                    "image-bytes",
                    f"spooling passed {limits.max_image_bytes} bytes (the max_image_bytes cap)",
                )
            spool.write(data)
        spool.flush()
    except OSError as exc:
        spool.close()
        raise ReadFailure("spool-failed", f"could not spool the layer: {exc}") from None
    except ReadFailure:
        spool.close()
        raise
    if size < declared:
        spool.close()
        raise truncated(f"the stream holds {size} of the member's {declared} bytes")
    return spool, size


def _note_config(data: bytes, workdirs: set[str]) -> None:
    """An image config tells where its working directory is: collect for it from now on."""
    try:
        doc = load_json(data, "member")
        if isinstance(doc, dict) and isinstance(doc.get("rootfs"), dict):
            workdirs.add(parse_config(doc).workdir)
    except ReadFailure:
        return  # not a config (or a broken one: resolve() reports it if it is the chosen one)


def _scan_member(
    walker: TarWalker,
    name: str,
    head: bytes,
    comp: str,
    workdirs: tuple[str, ...],
    budgets: Budgets,
) -> LayerScan:
    limits = budgets.limits
    scan = LayerScan(key=name, workdirs=workdirs, compression=comp)
    body = _Body(walker, head)
    blob_digest = digest_from_path(name)
    raw_hasher = data_hasher = None
    if limits.verify_layer_digests:
        raw_hasher = Hasher(parse_digest(blob_digest)[0] if blob_digest else "sha256")
        if comp != "none" and not blob_digest:
            data_hasher = Hasher()
    raw: ChunkSource = HashingSource(body, raw_hasher) if raw_hasher else body
    src = decompressed(raw, comp, limits)
    if data_hasher is not None:
        src = HashingSource(src, data_hasher)
    scan_layer(ByteReader(src, budgets.bytes, OUT_CHUNK), scan, budgets)
    try:
        if scan.failure is None:
            # Hash what follows the tar end marker too, within the image's byte cap.
            while data := src.chunk(OUT_CHUNK):
                budgets.bytes.charge(len(data))
            while raw.chunk(RAW_CHUNK):
                pass
        while body.chunk(RAW_CHUNK):  # after a failure: skip to the next member
            pass
    except ReadFailure as exc:
        scan.failure = scan.failure or exc  # a broken stream fails the walk right after
    for hasher, attr in ((raw_hasher, "raw_digest"), (data_hasher, "data_digest")):
        if hasher is not None:
            if scan.failure is not None:
                hasher.cancel()
            else:
                setattr(scan, attr, hasher.hexdigest())
    return scan


def _finish(
    target: str,
    platform: str | None,
    limits: Limits,
    smalls: _Smalls,
    scans: dict[str, LayerScan],
    spools: dict[str, tuple[IO[bytes], int]],
    member_failures: dict[str, ReadFailure],
    budgets: Budgets,
    sources: list[Source],
) -> ImageRead:
    resolved = resolve(smalls, platform, limits, sources)
    if resolved is None:
        return ImageRead(None, tuple(sources + _member_sources(target, member_failures, limits)))
    workdir = resolved.parsed.workdir if resolved.parsed else None
    workdirs = (workdir,) if workdir is not None else ()
    done: dict[str, LayerScan] = {}
    for o in resolved.outcomes:
        path = smalls._find(o.ref.path) or o.ref.path
        if path in done:
            o.scan = done[path]
        elif path in scans:
            o.scan = scans[path]
            if workdir is not None and workdir not in o.scan.workdirs:
                o.failure = ReadFailure(
                    "stream-order",
                    f"the layer passed before the config naming working directory /{workdir}; "
                    "its working-directory entries were not collected (read the saved file "
                    "instead of the stream)",
                )
        elif path in spools:
            f, size = spools[path]
            hashes = RegionHashes(1) if limits.verify_layer_digests else None
            try:
                region = Region(f.fileno(), 0, size, size)
                o.scan = scan_region(region, o.ref, o.diff_id, workdirs, budgets, hashes)
                o.scan.finish_hashing()
            finally:
                if hashes is not None:
                    hashes.close()
            done[path] = o.scan
        elif path in member_failures:
            o.failure = member_failures[path]
        else:
            ended = any(s.kind == "image-archive" and s.error_code for s in sources)
            o.failure = ReadFailure(
                "blob-missing",
                f"{o.ref.path} is not in the stream" + (" (it ended early)" if ended else ""),
            )
    used = {smalls._find(o.ref.path) or o.ref.path for o in resolved.outcomes}
    others = {n: exc for n, exc in member_failures.items() if n not in used}
    sources += _member_sources(target, others, limits)
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
    )


def _member_sources(target: str, failures: dict[str, ReadFailure], limits: Limits) -> list[Source]:
    """Members that failed and are not layers of the chosen image (those have their own)."""
    return [
        Source.failed(
            "image-archive",
            target,
            f"{name}: {exc.reason}",
            error_code=exc.code,
            retryable=exc.code in RETRYABLE,
        )
        for name, exc in list(failures.items())[: limits.max_entry_sources]
    ]
