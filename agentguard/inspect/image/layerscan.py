"""One layer, one pass: what the layer adds, deletes (whiteouts) and the few bodies we keep.

A scan does not know the layer's place in the image: results are keyed by path and merged
in chain order later (:mod:`agentguard.inspect.image.merge`), so a stream may deliver layers
in any order. Everything kept is bounded by :class:`Budgets` shared across the image.
"""

from __future__ import annotations

from agentguard.inspect.image.agentplan import ALWAYS_BASES, CONTENT, MANAGED_DIR, always_kind
from agentguard.inspect.image.agentscan import Kept, collect_agent_file
from agentguard.inspect.image.bytestreams import (
    ByteReader,
    ChunkSource,
    GzipSource,
    ZstdSource,
)
from agentguard.inspect.image.collect import (
    CODE,
    CONFIG,
    Scope,
    is_metadata,
    parse_metadata,
    purpose,
)
from agentguard.inspect.image.entrylog import HEAD_BYTES, EntryLog, may_collect
from agentguard.inspect.image.layerstate import (
    BodyReader,
    Budgets,
    EntryFields,
    LayerScan,
    Problem,
    Rec,
    collect_content,
    record_link_names,
)
from agentguard.inspect.image.limits import Limits, ReadFailure
from agentguard.inspect.image.tarwalk import TarWalker, display, normalise

__all__ = ["Budgets", "LayerScan", "Problem", "Rec", "decompressed", "replay_log", "scan_layer"]


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
    link_dirs = scan.dirs
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
            if e.kind != "file" or (slash > 0 and name[:slash] not in link_dirs):
                record_link_names(scan, name, e.kind, e.link, budgets)
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
            # (the name test inlined: it rejects nearly every entry without a call)
            always = (
                always_kind(name) if base in ALWAYS_BASES or name.startswith(MANAGED_DIR) else None
            )
            if log is not None:
                body = None
                head_only = False
                if e.kind == "file" and (always == CONTENT or may_collect(name)):
                    body = walker.read_body(min(e.size, limits.max_file_bytes))
                    bodies = Kept(body)  # a body is read from the stream once
                elif e.kind == "file" and e.mode & 0o111 and base != "METADATA":
                    # An executable may be what the config starts: its head tells a program.
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
                want = wants(name) if wants is not None else None
                if always is not None or want is not None:
                    read = tracked and name in scan.contents
                    collect_agent_file(scan, bodies, e, name, budgets, always, want, read=read)
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
                collect_agent_file(
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
        collect_content(scan, walker, e, name, budgets)
    else:
        scan.contents.pop(name, None)  # a later duplicate entry replaced a collected file


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
