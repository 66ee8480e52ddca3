"""One pass over a non-seekable saved-image stream (the engine's ``image.save()``).

Saved tarballs list members by name, so the config and ``manifest.json``/``index.json`` usually
come after (some of) the layers. JSON members are small and kept. A layer is scanned as it
passes: once a config has been seen, for the working directories of every config seen so
far; before any config, its entries are logged (:mod:`.entrylog`: header fields and the few
bodies some working directory could want) and replayed once the plan is known. Nothing is
buffered whole. Results are keyed by member path; the chain order is applied at the end.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import BinaryIO

from agentguard.findings import Source
from agentguard.inspect.image.agentplan import AgentPlan, link_wants_of, union
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
from agentguard.inspect.image.entrylog import EntryLog
from agentguard.inspect.image.hashing import Hasher
from agentguard.inspect.image.imageconfig import (
    ParsedConfig,
    load_json,
    parse_config,
    parse_digest,
)
from agentguard.inspect.image.layerscan import (
    Budgets,
    LayerScan,
    decompressed,
    replay_log,
    scan_layer,
)
from agentguard.inspect.image.layout import digest_from_path
from agentguard.inspect.image.limits import (
    DEFAULT_LIMITS,
    Limits,
    ReadFailure,
    cap_hit,
    truncated,
)
from agentguard.inspect.image.resolve import resolve
from agentguard.inspect.image.result import RETRYABLE, ImageRead, assemble, failed, plan_of
from agentguard.inspect.image.tarwalk import TarEntry, TarWalker, display, follow_links

SMALL_TEXT = 64 * 1024  # VERSION, repositories, oci-layout ...


class _Body:
    """The current member's body as a chunk source (after the sniffed head)."""

    def __init__(self, walker: TarWalker, head: bytes) -> None:
        self._walker = walker
        self._head = head
        self.delivered = 0

    def chunk(self, size: int) -> bytes:
        if self._head:
            data, self._head = self._head, b""
        else:
            data = self._walker.read_body_some(size)
        self.delivered += len(data)
        return data

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

    def find(self, name: str) -> str | None:
        return follow_links(name, self.kinds.get, self.limits.max_link_hops)

    def has(self, name: str) -> bool:
        return self.find(name) is not None

    def read_small(self, name: str, limit: int) -> bytes:
        found = self.find(name)
        if found is None or found not in self.data:
            raise ReadFailure("blob-missing", f"{name} is not in the stream (or not small)")
        data = self.data[found]
        if len(data) > limit:
            raise cap_hit("json-bytes", f"{name} is {len(data)} bytes (max_json_bytes cap)")
        return data


@dataclass
class _State:
    limits: Limits
    budgets: Budgets
    smalls: _Smalls
    small_bytes: int = 0
    workdirs: set[str] = field(default_factory=set)
    plans: list[AgentPlan] = field(default_factory=list)
    extra_plans: tuple[AgentPlan, ...] = ()
    scans: dict[str, LayerScan] = field(default_factory=dict)
    logs: dict[str, EntryLog] = field(default_factory=dict)
    member_failures: dict[str, ReadFailure] = field(default_factory=dict)
    log_budget: Budget | None = None


def read_image_stream(
    fileobj: BinaryIO,
    *,
    target: str,
    platform: str | None = None,
    limits: Limits = DEFAULT_LIMITS,
    expected: ParsedConfig | None = None,
    extra_plans: Sequence[AgentPlan] = (),
) -> ImageRead:
    """Read a saved image from a stream in one pass. Never raises for a bad image or a stream
    that fails: every problem is a failed source.

    ``expected``: the config the engine says the image has (its inspect record), so layers
    that pass before the config member are scanned for its working directory and agent
    directly. The config in the stream still decides: a layer scanned for another one is a
    failed source (``stream-order``). ``extra_plans``: agent plans collected for besides the
    image's own (a container that runs another command or sets another environment)."""
    state = _State(limits, Budgets(limits), _Smalls(limits))
    if expected is not None:
        state.workdirs.add(expected.workdir)
        state.plans.append(plan_of(expected))
    state.plans.extend(extra_plans)
    state.extra_plans = tuple(extra_plans)
    state.log_budget = Budget(
        limits.max_image_bytes, "image-bytes", "entries logged before the image config"
    )
    sources: list[Source] = []
    # The stream itself is capped too: members the reader only skips (unknown kinds,
    # padding) would otherwise cost unbounded time behind a small compressed file.
    stream_budget = Budget(limits.max_stream_bytes, "stream-bytes", "the saved image stream")
    outer = ByteReader(StreamSource(fileobj), stream_budget, RAW_CHUNK)
    walker = TarWalker(
        outer, max_entries=limits.max_outer_entries, max_header_bytes=limits.max_header_bytes
    )
    try:
        try:
            for e in walker:
                _member(e, walker, state)
            sources.append(Source.ok("image-archive", target, f"{walker.entries} members"))
        except ReadFailure as exc:
            sources.append(failed("image-archive", target, exc))
        return _finish(target, platform, state, sources)
    finally:
        for log in state.logs.values():
            log.close()


def _member(e: TarEntry, walker: TarWalker, state: _State) -> None:
    name = e.name
    if name is None:
        failure = ReadFailure("entry-name-rejected", e.error or "")
        state.member_failures[display(e.raw_name)] = failure
        return
    if e.kind in ("symlink", "hardlink"):
        state.smalls.kinds[name] = (e.kind, e.link)
        return
    if e.kind != "file":
        return
    state.smalls.kinds[name] = ("file", None)
    try:
        _file_member(e, name, walker, state)
    except ReadFailure as exc:  # the stream broke inside this member: name it, then stop
        state.member_failures.setdefault(name, exc)
        raise


def _file_member(e: TarEntry, name: str, walker: TarWalker, state: _State) -> None:
    limits = state.limits
    head = walker.read_body(min(e.size, 512))
    comp = sniff_compression(head)
    is_json = head.lstrip()[:1] in (b"{", b"[")
    looks_tar = len(head) == 512 and (head[257:262] == b"ustar" or not head.strip(b"\0"))
    if (is_json and e.size <= limits.max_json_bytes) or (
        e.size <= SMALL_TEXT and comp == "none" and not looks_tar
    ):
        state.small_bytes += e.size
        if state.small_bytes > 4 * limits.max_json_bytes:
            state.member_failures[name] = cap_hit(
                "json-bytes",
                f"small members passed {4 * limits.max_json_bytes} bytes (4 x max_json_bytes)",
            )
            return
        data = head + walker.read_body(e.size - len(head))
        state.smalls.data[name] = data
        if is_json:
            _note_config(data, state)
        return
    if name in state.logs:  # a duplicate member: the last one wins
        state.logs.pop(name).close()
    log = None
    if not state.workdirs and state.log_budget is not None:
        log = state.logs[name] = EntryLog(state.log_budget)
    workdirs = tuple(sorted(state.workdirs))
    plan = union(state.plans) if state.plans else None
    body = _Body(walker, head)
    state.scans[name] = _scan_member(body, name, comp, workdirs, state.budgets, log, plan)
    if body.delivered < e.size:  # the stream ended inside this member
        state.member_failures[name] = truncated(
            f"the stream holds {body.delivered} of the member's {e.size} bytes"
        )


def _note_config(data: bytes, state: _State) -> None:
    """An image config tells where its working directory and its agent are: collect for
    them from now on."""
    try:
        doc = load_json(data, "member")
        if isinstance(doc, dict) and isinstance(doc.get("rootfs"), dict):
            parsed = parse_config(doc)
            state.workdirs.add(parsed.workdir)
            state.plans.append(plan_of(parsed))
    except ReadFailure:
        return  # not a config (or a broken one: resolve() reports it if it is the chosen one)


def _scan_member(
    body: _Body,
    name: str,
    comp: str,
    workdirs: tuple[str, ...],
    budgets: Budgets,
    log: EntryLog | None,
    plan: AgentPlan | None = None,
) -> LayerScan:
    limits = budgets.limits
    scan = LayerScan(key=name, workdirs=workdirs, compression=comp, plan=plan)
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
    scan_layer(ByteReader(src, budgets.bytes, OUT_CHUNK), scan, budgets, log)
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


def _finish(target: str, platform: str | None, state: _State, sources: list[Source]) -> ImageRead:
    limits, smalls = state.limits, state.smalls
    resolved = resolve(smalls, platform, limits, sources)
    if resolved is None:
        extra = _member_sources(target, state.member_failures, limits)
        return ImageRead(None, tuple(sources + extra))
    workdir = resolved.parsed.workdir if resolved.parsed else None
    chosen_plan = union([plan_of(resolved.parsed), *state.extra_plans]) if resolved.parsed else None
    ended = any(s.kind == "image-archive" and s.error_code for s in sources)
    for o in resolved.outcomes:
        path = smalls.find(o.ref.path) or o.ref.path
        scan = state.scans.get(path)
        if scan is None:
            o.failure = state.member_failures.get(path) or ReadFailure(
                "blob-missing",
                f"{o.ref.path} is not in the stream" + (" (it ended early)" if ended else ""),
            )
            continue
        o.scan = scan
        log = state.logs.pop(path, None)
        if log is not None:  # read before any config: collect for the real workdir now
            scan.workdirs = (workdir,) if workdir is not None else ()
            scan.plan = chosen_plan
            replay_log(log, scan, state.budgets)
            log.close()
        elif workdir is not None and workdir not in scan.workdirs:
            o.failure = ReadFailure(
                "stream-order",
                f"the layer passed before the config naming working directory /{workdir}; "
                "its working-directory entries were not collected (read the saved file "
                "instead of the stream)",
            )
        elif chosen_plan is not None and (scan.plan is None or not scan.plan.covers(chosen_plan)):
            o.failure = ReadFailure(
                "stream-order",
                "the layer passed before the config naming the image's entrypoint; the "
                "agent's files there were not collected (read the saved file instead of "
                "the stream)",
            )
    used = {smalls.find(o.ref.path) or o.ref.path for o in resolved.outcomes}
    others = {n: exc for n, exc in state.member_failures.items() if n not in used}
    sources += _member_sources(target, others, limits)
    return assemble(
        target=target,
        layout=resolved.layout,
        chosen=resolved.chosen,
        parsed=resolved.parsed,
        image_id=resolved.image_id,
        outcomes=resolved.outcomes,
        limits=limits,
        listing_truncated=state.budgets.listing_truncated,
        sources=sources,
        plan=chosen_plan,
        link_wants=link_wants_of(state.extra_plans),
        links_truncated=state.budgets.links_truncated,
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
