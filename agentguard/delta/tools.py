"""``check --base REF``: the ``tools/list`` snapshots ``mcp.lock.json`` records at REF
against those the change's lock records, entry by entry (AG146 judges the pairs). The base's
lock is read as hostile as the head's: a lock that cannot be read is a failed source, never
"the change touched no snapshot"."""

from __future__ import annotations

from pathlib import Path

from agentguard.facts.mcp_pins import ServerLock, ServerPin
from agentguard.facts.mcp_tools import ToolsCompared, ToolsDropped
from agentguard.findings import Source

KIND = "mcp-tools"


def _read(folder: Path) -> ServerLock | str | None:
    from agentguard.lock.servers import lockfile

    try:
        return lockfile.read(folder)
    except (lockfile.LockReadError, OSError) as exc:
        return str(exc)


def _same(pin: ServerPin, pins: tuple[ServerPin, ...]) -> list[ServerPin]:
    """The head's entries for a base entry: its key, or the one on its line (two stay two)."""
    same = [p for p in pins if p.key == pin.key]
    return [p for p in same if p.line == pin.line] if len(same) > 1 else same


def snapshot_edits(
    base: Path, head: Path, ref: str
) -> tuple[tuple[ToolsCompared, ...], tuple[ToolsDropped, ...], tuple[Source, ...]]:
    """Each entry whose recorded snapshot the change re-records, each it drops, and the
    sources (a lock that could not be read; an entry matched twice)."""
    from agentguard.lock.servers.lockfile import MCP_LOCK

    old, new = _read(base), _read(head)
    for side, got in (("the base's", old), ("the change's", new)):
        if isinstance(got, str):
            why = f"{side} {MCP_LOCK} could not be read: {got}; the snapshots the change records were not compared"
            return (), (), (Source.failed(KIND, f"{ref}..head {MCP_LOCK}", why, error_code="mcp-lock-unreadable"),)  # fmt: skip
    assert not isinstance(old, str) and not isinstance(new, str)
    if old is None:
        return (), (), ()  # (no snapshot was recorded before the change)
    edits: list[ToolsCompared] = []
    dropped: list[ToolsDropped] = []
    sources: list[Source] = []
    for pin in (p for p in old.pins if p.tools is not None):
        assert pin.tools is not None
        same = _same(pin, new.pins if new is not None else ())
        if len(same) > 1:
            sources.append(Source.skipped(KIND, f"{pin.server} ({MCP_LOCK})", "the snapshot "
                                          f"{ref} records was not compared: the change's lock "
                                          "holds two entries for it"))  # fmt: skip
            continue
        if not same:
            continue  # the entry is gone with its launch (the lock's own delta says so)
        now = same[0]
        if now.tools is None:
            dropped.append(ToolsDropped(now.server, now.package, MCP_LOCK, now.entry_line, ref, pin.tools))  # fmt: skip
        elif now.tools != pin.tools:
            edits.append(
                ToolsCompared(
                    server=now.server, kind=now.kind, package=now.package, version=now.version,
                    lock_path=MCP_LOCK, lock_line=now.entry_line, launch_path=now.path,
                    launch_line=now.line, recorded=pin.tools, live=now.tools, base_ref=ref,
                )
            )  # fmt: skip
    return tuple(edits), tuple(dropped), tuple(sources)
