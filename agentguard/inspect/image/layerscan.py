"""One layer, one pass: what the layer adds, deletes (whiteouts) and the few bodies we keep.

A scan does not know the layer's place in the image: results are keyed by path and merged
in chain order later (:mod:`agentguard.inspect.image.merge`), so a stream may deliver layers
in any order. Everything kept is bounded by :class:`Budgets` shared across the image.
"""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Protocol

from agentguard.inspect.image.bytestreams import (
    Budget,
    ByteReader,
    ChunkSource,
    GzipSource,
    ZstdSource,
)
from agentguard.inspect.image.collect import (
    CODE,
    CONFIG,
    MANAGED_SETTINGS,
    Metadata,
    Scope,
    is_metadata,
    parse_metadata,
    purpose,
)
from agentguard.inspect.image.entrylog import EntryLog, may_collect
from agentguard.inspect.image.hashing import Hasher, digest_result
from agentguard.inspect.image.limits import Limits, ReadFailure
from agentguard.inspect.image.tarwalk import EntryCount, TarWalker, display, normalise

# (kind, size, mode, link target, notable)
Rec = tuple[str, int, int, str | None, bool]


class BodyReader(Protocol):
    def read_body(self, limit: int) -> bytes: ...


class EntryFields(Protocol):
    """What collection needs of an entry: a tar header's, or a logged one's."""

    @property
    def kind(self) -> str: ...
    @property
    def size(self) -> int: ...
    @property
    def mode(self) -> int: ...
    @property
    def link(self) -> str | None: ...


class Budgets:
    """Caps shared by all layers of one image."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.bytes = Budget(limits.max_image_bytes)
        self.entries = EntryCount(limits.max_entries_per_image)
        self.content_left = limits.max_content_bytes
        self.code_left = limits.max_code_files
        self.tracked_left = limits.max_tracked_entries
        self.notable_left = limits.max_tracked_entries
        self.listing_truncated = False


@dataclass(frozen=True)
class Problem:
    """An entry that could not be read as wanted: becomes a failed ``Source``."""

    path: str  # absolute, printable
    code: str
    reason: str


@dataclass
class LayerScan:
    key: str  # where the layer is in the archive (member path or blob)
    workdirs: tuple[str, ...]  # the scope it was collected for
    compression: str | None = None
    entries: int = 0
    failure: ReadFailure | None = None
    tree: dict[str, Rec] = field(default_factory=dict)  # entries at/below the workdirs
    whiteouts: set[str] = field(default_factory=set)
    opaque: set[str] = field(default_factory=set)
    contents: dict[str, tuple[bytes, bool]] = field(default_factory=dict)  # data, truncated
    dists: dict[str, Metadata] = field(default_factory=dict)  # keyed by METADATA path
    sockets: set[str] = field(default_factory=set)
    ancestors: dict[str, str] = field(default_factory=dict)  # workdir and its parents: kind
    problems: list[Problem] = field(default_factory=list)
    raw_digest: str | None = None  # of the bytes as stored (blob digest)
    data_digest: str | None = None  # of the uncompressed tar (diff_id)
    raw_future: Future[str] | None = None  # the stored bytes' digest, still running
    data_hasher: Hasher | None = None  # the decompressed tar's digest, fed by the walk

    def finish_hashing(self) -> None:
        """Wait for this layer's digests (a failed layer's are abandoned)."""
        if self.raw_future is not None:
            if self.failure is not None:
                self.raw_future.cancel()
            else:
                try:
                    self.raw_digest = digest_result(self.raw_future)
                except ReadFailure as exc:
                    self.failure = exc
        if self.data_hasher is not None:
            if self.failure is not None:
                self.data_hasher.cancel()
            else:
                self.data_digest = self.data_hasher.hexdigest()
        self.raw_future = self.data_hasher = None


def decompressed(raw: ChunkSource, compression: str, limits: Limits) -> ChunkSource:
    if compression == "gzip":
        return GzipSource(raw)
    if compression == "zstd":
        return ZstdSource(raw, limits.max_zstd_window)
    return raw


def scan_layer(
    reader: ByteReader, scan: LayerScan, budgets: Budgets, log: EntryLog | None = None
) -> None:
    """Walk one layer's tar, filling ``scan``; a failure is recorded, never raised.

    With ``log`` (the working directory is not known yet), every entry is logged for
    :func:`replay_log` and only what does not depend on the working directory is collected.
    """
    limits = budgets.limits
    scope = Scope(scan.workdirs)
    walker = TarWalker(
        reader,
        max_entries=limits.max_entries_per_layer,
        max_header_bytes=limits.max_header_bytes,
        image_entries=budgets.entries,
    )
    covers, ancestors = scope.covers, scope.ancestors
    try:
        for e in walker:
            name = e.name
            if name is None:
                scan.problems.append(
                    Problem("/" + display(e.raw_name), "entry-name-rejected", e.error or "")
                )
                continue
            slash = name.rfind("/")
            base = name[slash + 1 :]
            if base.startswith(".wh."):
                _whiteout(scan, name[:slash] if slash >= 0 else "", base)
                continue
            if e.kind == "hardlink" and normalise(e.link or "")[0] is None:
                # The engine refuses such a layer (a breakout); never shown as a link to "/".
                scan.problems.append(
                    Problem(
                        "/" + display(name),
                        "link-outside-image",
                        f"a hard link to {display(e.link or '')!r} leads outside the image root",
                    )
                )
            if log is not None:
                body = None
                if e.kind == "file" and may_collect(name):
                    body = walker.read_body(min(e.size, limits.max_file_bytes))
                log.add(name, e.kind, e.size, e.mode, e.link, body)
            if name in ancestors:
                scan.ancestors[name] = e.kind
            if covers(name):
                _track(scan, walker, e, name, scope, budgets)
            if base == "METADATA" and is_metadata(name):
                _metadata(scan, walker, e, name, budgets)
            elif base == "docker.sock":
                scan.sockets.add(name)
            elif name == MANAGED_SETTINGS:
                _content(scan, walker, e, name, budgets)
    except ReadFailure as exc:
        scan.failure = exc
    scan.entries = walker.entries


def replay_log(log: EntryLog, scan: LayerScan, budgets: Budgets) -> None:
    """Collect from a logged layer for ``scan.workdirs``, as :func:`scan_layer` would have."""
    scope = Scope(scan.workdirs)
    try:
        for e in log.replay():
            name = e.name
            if name in scope.ancestors:
                scan.ancestors[name] = e.kind
            if not scope.covers(name):
                continue
            _track(scan, e, e, name, scope, budgets)
            if e.missed:
                scan.contents.pop(name, None)
                scan.problems.append(
                    Problem(
                        "/" + display(name),
                        "stream-order",
                        "not read: the file passed in the stream before the image config and "
                        "sits in a folder whose files are not kept for an unknown working "
                        "directory (read the saved file instead of the stream)",
                    )
                )
    except OSError as exc:  # the log is our own temporary file
        scan.failure = scan.failure or ReadFailure("read-error", f"the entry log: {exc}")


def _whiteout(scan: LayerScan, parent: str, base: str) -> None:
    if base == ".wh..wh..opq":
        scan.opaque.add(parent)
    elif base.startswith(".wh..wh."):
        return  # aufs bookkeeping (.wh..wh.plnk ...): ignored, as the engine does
    else:
        target = base[4:]
        scan.whiteouts.add(f"{parent}/{target}" if parent else target)


def _track(
    scan: LayerScan, walker: BodyReader, e: EntryFields, name: str, scope: Scope, budgets: Budgets
) -> None:
    rel, via_root = scope.relative(name)
    why = purpose(rel, root=via_root) if rel else None
    if why is None:
        if budgets.tracked_left <= 0:
            budgets.listing_truncated = True
            return
        budgets.tracked_left -= 1
    else:
        if budgets.notable_left <= 0:
            budgets.listing_truncated = True
            return
        budgets.notable_left -= 1
    link = e.link
    if e.kind == "hardlink" and link is not None and normalise(link)[0] is not None:
        link = "/" + (normalise(link)[0] or "")
    scan.tree[name] = (e.kind, e.size, e.mode, display(link) if link else None, why is not None)
    if why in (CONFIG, CODE):
        if why == CODE:
            if budgets.code_left <= 0:
                scan.problems.append(
                    Problem(
                        "/" + display(name),
                        "cap-code-files",
                        f"not read: more than {budgets.limits.max_code_files} agent code files "
                        "under the working directory (max_code_files cap)",
                    )
                )
                return
            budgets.code_left -= 1
        _content(scan, walker, e, name, budgets)
    else:
        scan.contents.pop(name, None)  # a later duplicate entry replaced a collected file


def _content(
    scan: LayerScan, walker: BodyReader, e: EntryFields, name: str, budgets: Budgets
) -> None:
    path = "/" + display(name)
    if e.kind == "hardlink":
        target = normalise(e.link or "")[0]
        if target is not None and target in scan.contents:
            scan.contents[name] = scan.contents[target]
        else:
            scan.problems.append(
                Problem(
                    path, "link-content-unavailable", f"a hard link to {e.link!r} not collected"
                )
            )
        return
    if e.kind != "file":
        scan.contents.pop(name, None)
        return
    cap = budgets.limits.max_file_bytes
    want = min(e.size, cap)
    if want > budgets.content_left:
        scan.problems.append(
            Problem(
                path,
                "cap-content-bytes",
                f"not read: collected files passed {budgets.limits.max_content_bytes} bytes "
                "(max_content_bytes cap)",
            )
        )
        return
    data = walker.read_body(want)
    budgets.content_left -= len(data)
    cut = e.size > cap
    scan.contents[name] = (data, cut)
    if cut:
        scan.problems.append(
            Problem(
                path,
                "cap-file-bytes",
                f"only the first {cap} of {e.size} bytes read (max_file_bytes cap)",
            )
        )


def _metadata(
    scan: LayerScan, walker: BodyReader, e: EntryFields, name: str, budgets: Budgets
) -> None:
    path = "/" + display(name)
    scan.dists.pop(name, None)
    scan.contents.pop(name, None)
    if e.kind != "file":
        if e.kind in ("symlink", "hardlink"):
            scan.problems.append(
                Problem(path, "metadata-link", f"METADATA is a {e.kind} to {e.link!r}: not read")
            )
        return
    cap = budgets.limits.max_file_bytes
    data = walker.read_body(min(e.size, cap))
    meta = parse_metadata(data, complete=e.size <= cap)
    if isinstance(meta, str):
        scan.problems.append(Problem(path, "metadata-unreadable", meta))
        return
    scan.dists[name] = meta
    if len(meta.header) > budgets.content_left:
        scan.problems.append(
            Problem(
                path,
                "cap-content-bytes",
                "header block not kept: collected files passed "
                f"{budgets.limits.max_content_bytes} bytes (max_content_bytes cap)",
            )
        )
        return
    budgets.content_left -= len(meta.header)
    scan.contents[name] = (meta.header, False)
