"""One layer, one pass: what the layer adds, deletes (whiteouts) and the few bodies we keep.

A scan does not know the layer's place in the image: results are keyed by path and merged
in chain order later (:mod:`agentguard.inspect.image.merge`), so a stream may deliver layers
in any order. Everything kept is bounded by :class:`Budgets` shared across the image.
"""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Protocol

from agentguard.inspect.image.agentplan import CONTENT, ENTRY, AgentPlan, always_kind
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
    Metadata,
    Scope,
    is_metadata,
    parse_metadata,
    purpose,
)
from agentguard.inspect.image.entrylog import HEAD_BYTES, EntryLog, may_collect
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
        self.speculative_left = limits.max_code_files  # wrapper targets kept on spec
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
    plan: AgentPlan | None = None  # the agent's files outside the working directory
    agent_entries: dict[str, Rec] = field(default_factory=dict)  # the plan's and CLIs' entries
    speculative_dropped: int = 0  # wrapper-target candidates over the cap (not kept)
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
    wants = scan.plan.wants if scan.plan is not None and scan.plan.active else None
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
            bodies: BodyReader = walker
            if log is not None:
                body = None
                head_only = False
                if e.kind == "file" and (may_collect(name) or always_kind(name) == CONTENT):
                    body = walker.read_body(min(e.size, limits.max_file_bytes))
                    bodies = _Kept(body)  # a body is read from the stream once
                elif e.kind == "file" and base != "METADATA":
                    body, head_only = walker.read_body(min(e.size, HEAD_BYTES)), True
                log.add(name, e.kind, e.size, e.mode, e.link, body, head_only=head_only)
            if name in ancestors:
                scan.ancestors[name] = e.kind
            tracked = covers(name)
            if tracked:
                _track(scan, bodies, e, name, scope, budgets)
            if base == "METADATA" and is_metadata(name):
                _metadata(scan, bodies, e, name, budgets)
            elif base == "docker.sock":
                scan.sockets.add(name)
            else:
                always = always_kind(name)
                want = wants(name) if wants is not None else None
                if always is not None or want is not None:
                    read = tracked and name in scan.contents
                    _agent(scan, bodies, e, name, budgets, always, want, read=read)
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
            want = scan.plan.wants(name) if scan.plan is not None else None
            if want is not None and always_kind(name) == CONTENT:
                want = None  # collected by the layer's own walk, whatever the plan
            if want is not None:
                covered = scope.covers(name)
                if covered:
                    _track(scan, e, e, name, scope, budgets)
                _agent(
                    scan, e, e, name, budgets, None, want, read=covered and name in scan.contents
                )
                if e.missed and want == "speculative":
                    scan.contents.pop(name, None)
                    scan.speculative_dropped += 1
                    continue
            elif scope.covers(name):
                _track(scan, e, e, name, scope, budgets)
            else:
                continue
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


_ELF = b"\x7fELF"


class _Kept:
    """A body already read (and logged), read again by the collectors."""

    __slots__ = ("_data",)

    def __init__(self, data: bytes) -> None:
        self._data = data

    def read_body(self, limit: int) -> bytes:
        return self._data[:limit]


def _agent(
    scan: LayerScan,
    walker: BodyReader,
    e: EntryFields,
    name: str,
    budgets: Budgets,
    always: str | None,
    want: str | None,
    *,
    read: bool,
) -> None:
    """An agent file outside the working directory: its entry, and its body when wanted.

    ``read``: the working-directory pass already took the body (a body is read once)."""
    link = e.link
    if e.kind == "hardlink" and link is not None and normalise(link)[0] is not None:
        link = "/" + (normalise(link)[0] or "")
    if always in (ENTRY, CONTENT) or want == "exact":
        scan.agent_entries[name] = (e.kind, e.size, e.mode, display(link) if link else None, True)
    if read or (always != CONTENT and want is None):
        return
    if e.kind != "file" and e.kind != "hardlink":
        scan.contents.pop(name, None)
        return
    if want == "speculative" and always is None:
        if budgets.speculative_left <= 0:
            scan.speculative_dropped += 1
            return
        budgets.speculative_left -= 1
    elif want == "code" and always is None:
        if budgets.code_left <= 0:
            scan.problems.append(
                Problem(
                    "/" + display(name),
                    "cap-code-files",
                    f"not read: more than {budgets.limits.max_code_files} agent code files "
                    "(max_code_files cap)",
                )
            )
            return
        budgets.code_left -= 1
    elif (
        want == "exact"
        and e.kind == "file"
        and (getattr(walker, "head", None) or b"").startswith(_ELF)
    ):
        scan.contents[name] = (_ELF, True)  # a compiled program, told by its logged head
        budgets.content_left -= len(_ELF)
        return
    elif want == "exact" and e.kind == "file" and e.size > budgets.limits.max_file_bytes:
        # Maybe a compiled program: its head says so, and it is not kept.
        head = walker.read_body(min(e.size, budgets.limits.max_file_bytes))
        if head.startswith(_ELF):
            scan.contents[name] = (head[:4], True)
            budgets.content_left -= 4
            return
        scan.contents.pop(name, None)
        scan.problems.append(
            Problem(
                "/" + display(name),
                "cap-file-bytes",
                f"the program the image starts is {e.size} bytes, over the "
                f"{budgets.limits.max_file_bytes} byte max_file_bytes cap: not read",
            )
        )
        return
    _content(scan, walker, e, name, budgets)
