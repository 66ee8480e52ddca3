"""The smoke run's stdio servers against the ``tools/list`` snapshots ``mcp.lock.json``
records: each started server is matched to its entry (file, server name, kind, package,
as :func:`~agentguard.facts.mcp_pins.pin_for` matches launches), compared (AG145 judges
the pairs), and, in ``lock --smoke``, recorded where the entry holds none.

A recorded snapshot is never replaced silently: a changed answer is AG145, and only
``--accept-tools NAME`` (the entry's package or server name) records the new one. A
server the run did not start, or that did not answer, is a skipped source for its entry,
never "no change". The lock is written through the lock writer (the safe-write path),
holding the project's lock, and not at all when it changed since it was read."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from agentguard.facts.mcp_pins import ServerLock, ServerPin
from agentguard.facts.mcp_tools import ToolsCompared, ToolSnapshot
from agentguard.facts.smoke import OK, Probe, SmokeFacts
from agentguard.findings import Source

KIND = "mcp-tools"


@dataclass(frozen=True)
class ToolsResult:
    facts: SmokeFacts  # with ``tools``: the pairs AG145 compares
    sources: tuple[Source, ...]
    notes: tuple[str, ...]


def _match(
    key: tuple[str, str, str, str], line: int, pins: Sequence[ServerPin]
) -> ServerPin | None:
    """The entry of a launch's key, or the one on its line (two: None, never the first)."""
    same = [p for p in pins if p.key == key]
    if len(same) > 1:
        same = [p for p in same if p.line == line]
    return same[0] if len(same) == 1 else None


def _where(pin: ServerPin, lock: str) -> str:
    return f"{pin.server} ({lock}" + (f":{pin.entry_line})" if pin.entry_line else ")")


def _read(root: Path) -> tuple[ServerLock | None, bytes | None, Source | None]:
    from agentguard import safeio
    from agentguard.lock.servers import lockfile

    try:
        raw = safeio.read_bytes(root / lockfile.MCP_LOCK, root=root, cap=safeio.MAX_LOCK_BYTES)
    except FileNotFoundError:
        return None, None, None
    except OSError as exc:
        raw = None
        failure: Exception | None = exc
    else:
        failure = None
    if failure is None:
        try:
            return lockfile.read(root), raw, None
        except (lockfile.LockReadError, OSError) as exc:
            failure = exc
    why = f"{lockfile.MCP_LOCK} could not be read: {failure}; no server's tools were compared"
    return None, raw, Source.failed(KIND, lockfile.MCP_LOCK, why, error_code="mcp-lock-unreadable")


def compare_tools(
    root: Path, facts: SmokeFacts, *, record: bool, accept: tuple[str, ...] = ()
) -> ToolsResult:
    """``record``: ``lock --smoke`` (write snapshots); else ``check --smoke`` (compare only)."""
    from agentguard.lock.servers.lockfile import MCP_LOCK

    lock, raw, failed = _read(root)
    if failed is not None:
        return ToolsResult(facts, (failed,), ())
    pins = lock.pins if lock is not None else ()
    sources: list[Source] = []
    compared: list[ToolsCompared] = []
    fresh: dict[tuple[tuple[str, str, str, str], int], ToolSnapshot] = {}
    accepted: list[str] = []
    chosen, refused = _accepted(pins, accept, MCP_LOCK) if record else ({}, [])
    seen: set[tuple[str, str, str, str]] = set()
    verb = "recorded" if record else "compared"
    for probe in (p for p in facts.probes if p.kind == "stdio"):
        label = f"{probe.subject} ({probe.path})"
        if probe.lock_key is None:
            if probe.status == OK:
                sources.append(Source.skipped(KIND, label, f"tools not {verb}: the launch takes "
                                              f"no package from a registry, so {MCP_LOCK} holds no "
                                              "entry for it"))  # fmt: skip
            continue
        pin = _match(probe.lock_key, probe.line or 0, pins)
        if pin is None:
            if probe.status == OK:
                why = "no mcp.lock.json" if lock is None else f"{MCP_LOCK} holds no entry for it"
                sources.append(Source.skipped(KIND, label, f"tools not {verb}: {why} (`agentguard "
                                              "lock` writes one)"))  # fmt: skip
            continue
        seen.add(pin.key)
        where = _where(pin, MCP_LOCK)
        live = probe.snapshot
        if probe.status != OK or live is None:
            if pin.tools is not None or record:
                sources.append(Source.skipped(KIND, where, f"tools not {verb}: the server did not "
                                              f"answer tools/list ({probe.status}: {probe.detail})"))  # fmt: skip
            continue
        live = dataclasses.replace(live, recorded_with=pin.version)
        if pin.tools is None:
            if record:
                fresh[(pin.key, pin.line)] = live
            else:
                sources.append(Source.skipped(KIND, where, "tools not compared: the entry holds no "
                                              "tools/list snapshot (`agentguard lock --smoke` records one)"))  # fmt: skip
            continue
        same = pin.tools.digest == live.digest
        if record and same and pin.tools.recorded_with != pin.version:
            fresh[(pin.key, pin.line)] = live  # the same tools, now for the version the entry holds
        bound = chosen.get((pin.key, pin.line), "") if not same and record else ""
        if bound is None or bound == live.digest:  # (None: the name alone, any answer)
            fresh[(pin.key, pin.line)] = live
            accepted.append(pin.server)
            sources.append(Source.ok(KIND, where, "tools changed and re-recorded (--accept-tools)"))
            continue
        if bound:
            sources.append(Source.skipped(KIND, where, "tools not re-recorded: --accept-tools "
                                          f"named the answer {bound[:19]}..., and the server now "
                                          f"answers {live.digest[:19]}... (it answers otherwise "
                                          "from run to run, or changed again since the review)"))  # fmt: skip
        compared.append(_pair(pin, probe, live, MCP_LOCK))
        said = (
            f"{live.count} tool(s), as recorded"
            if same
            else "they differ from the snapshot (AG145)"
        )
        sources.append(Source.ok(KIND, where, f"tools compared: {said}" + _cut(live)))
    for gone in facts.not_started:
        pin = _match(gone.lock_key, gone.line, pins) if gone.lock_key else None
        if pin is not None and pin.key not in seen and pin.tools is not None:
            seen.add(pin.key)
            sources.append(Source.skipped(KIND, _where(pin, MCP_LOCK), "tools not compared: the "
                                          f"smoke run did not start the server: {gone.reason}"))  # fmt: skip
    for pin in pins:
        if pin.tools is not None and pin.key not in seen:
            sources.append(Source.skipped(KIND, _where(pin, MCP_LOCK), "tools not compared: the "
                                          "smoke run found no launch of this entry to start"))  # fmt: skip
    notes: list[str] = list(refused)
    if accepted:
        notes.append(f"{MCP_LOCK}: the changed tools of {', '.join(map(repr, accepted))} were "
                     "accepted (--accept-tools) and re-recorded.")  # fmt: skip
    if fresh and lock is not None:
        sources.append(_write(root, lock, raw, fresh))
        if sources[-1].status.value == "ok":
            notes.append(
                f"Recorded the tools/list answer of {len(fresh)} MCP server(s) in {MCP_LOCK}."
            )
    return ToolsResult(
        dataclasses.replace(facts, tools=tuple(compared)), tuple(sources), tuple(notes)
    )


def _accepted(
    pins: Sequence[ServerPin], accept: tuple[str, ...], lock: str
) -> tuple[dict[tuple[tuple[str, str, str, str], int], str | None], list[str]]:
    """The entries each ``--accept-tools NAME[@sha256:DIGEST]`` names (a package, or a
    server name), each with the set digest of the answer it accepts (None: the name alone,
    whatever the server answers in this run), and a note for each name that names none or
    entries of more than one package: a server name may be another entry's package (or the
    same name in two files, other packages), and taking them all would re-record a server
    nobody reviewed. The digest (AG145's fix names it) binds the acceptance to the answer
    reviewed: a server answering otherwise in the accepting run is not recorded."""
    chosen: dict[tuple[tuple[str, str, str, str], int], str | None] = {}
    notes: list[str] = []
    for given in dict.fromkeys(accept):
        name, at, hexdigest = given.partition("@sha256:")
        digest = f"sha256:{hexdigest}" if at else None
        named = [p for p in pins if name in (p.package, p.server)]
        packages = sorted({f"{p.package} ({p.server}, {p.path})" for p in named})
        if not named:
            notes.append(f"--accept-tools {name!r}: no entry of {lock} has that package or "
                         "server name; nothing was accepted for it.")  # fmt: skip
        elif len({(p.kind, p.package) for p in named}) > 1:
            notes.append(f"--accept-tools {name!r} names entries of several packages "
                         f"({'; '.join(packages)}): none of them was accepted; give the "
                         "package of the one reviewed.")  # fmt: skip
        else:
            chosen |= {(p.key, p.line): digest for p in named}
    return chosen, notes


def _cut(snap: ToolSnapshot) -> str:
    return f"; truncated: {'; '.join(snap.truncated)}" if snap.truncated else ""


def _pair(pin: ServerPin, probe: Probe, live: ToolSnapshot, lock: str) -> ToolsCompared:
    assert pin.tools is not None
    return ToolsCompared(
        server=pin.server, kind=pin.kind, package=pin.package, version=pin.version,
        lock_path=lock, lock_line=pin.entry_line, launch_path=probe.path or pin.path,
        launch_line=probe.line or pin.line, recorded=pin.tools, live=live,
    )  # fmt: skip


def _write(
    root: Path,
    lock: ServerLock,
    raw: bytes | None,
    fresh: dict[tuple[tuple[str, str, str, str], int], ToolSnapshot],
) -> Source:
    from agentguard import safeio
    from agentguard.lock.mutex import LockfileError, project_lock
    from agentguard.lock.servers import lockfile

    name = lockfile.MCP_LOCK
    try:
        with project_lock(root):
            try:
                now = safeio.read_bytes(root / name, root=root, cap=safeio.MAX_LOCK_BYTES)
            except OSError:
                now = None
            if now != raw:
                return Source.failed(
                    KIND, name, "tools not recorded: the MCP server lock changed while the smoke "
                    "run ran", error_code="mcp-lock-changed", retryable=True,
                    remedy="Run `agentguard lock --smoke` again.",
                )  # fmt: skip
            pins = [
                dataclasses.replace(p, tools=fresh.get((p.key, p.line), p.tools)) for p in lock.pins
            ]
            if len(lockfile.render(pins).encode()) > safeio.MAX_LOCK_BYTES:
                return Source.failed(
                    KIND, name, "tools not recorded: the lock would grow past what its reader "
                    f"reads ({safeio.MAX_LOCK_BYTES // (1024 * 1024)} MiB)",
                    error_code="mcp-lock-too-large", retryable=False,
                    remedy="Record fewer servers' tools (exclude some launches), or none.",
                )  # fmt: skip
            lockfile.write_lock_only(root, pins)
    except (LockfileError, OSError) as exc:
        return Source.failed(KIND, name, f"tools not recorded: {exc}",
                             error_code=getattr(exc, "code", "mcp-lock-unwritable"))  # fmt: skip
    return Source.ok(KIND, name, f"tools/list answer recorded for {len(fresh)} MCP server(s)")
