"""The smoke run: install the lock into a scratch environment, then start what the project
starts (its agent SDK imports, its in-process MCP servers, its stdio MCP servers), each in
a child process under a deadline. Gathers facts and sources only; the AG6xx rules judge."""

from __future__ import annotations

import json
import os
import re
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from agentguard.facts.agents import McpServer
from agentguard.facts.smoke import (
    FAILED,
    NEEDS_CREDENTIALS,
    Crash,
    Crossing,
    NotStarted,
    Probe,
    SmokeFacts,
)
from agentguard.findings import Source
from agentguard.inspect.project.own_modules import project_modules
from agentguard.lock.deadline import NO_DEADLINE, Deadline
from agentguard.scratch import make as make_scratch
from agentguard.scratch import remove as remove_scratch
from agentguard.smoke.clock import Clock, cut_short
from agentguard.smoke.install import Options, install
from agentguard.smoke.proc import Ran, child_env, ended_on_interrupt, run, tail
from agentguard.smoke.targets import Target, gather

DEFAULT_TIMEOUT = 900.0  # the whole smoke run, seconds (and never past the run's --timeout)
SERVER_TIMEOUT = 180.0  # one stdio server: a launcher's cold download, initialize, tools/list
PROBE_TIMEOUT = 600.0  # the probe child (every import and in-process server, in turn)


@dataclass(frozen=True)
class SmokeOptions:
    index: Options = field(default_factory=Options)
    timeout: float = DEFAULT_TIMEOUT
    server_timeout: float = SERVER_TIMEOUT
    probe_timeout: float = PROBE_TIMEOUT
    exclude: tuple[str, ...] = ()
    # `lock --smoke`: record each started server's tools/list answer in its mcp.lock.json
    # entry (where it holds none, or where --accept-tools names a changed one)
    record_tools: bool = False
    accept_tools: tuple[str, ...] = ()
    # the run's deadline (--timeout): the smoke run ends by it too, and a part of it that
    # the run's deadline cut short is a failed source (see agentguard.smoke.clock)
    deadline: Deadline = NO_DEADLINE


def smoke_run(
    root: Path,
    requires_python: str | None,
    opts: SmokeOptions,
    crossings: tuple[Crossing, ...] = (),
) -> tuple[SmokeFacts, list[Source]]:
    clock = Clock.start(opts.timeout, opts.deadline)
    targets = gather(root, opts.exclude)
    sources = list(targets.sources)
    left = clock.budget()
    if left.spent and left.cut:  # nothing of it can start: each part it would have tried fails
        return _not_run(root, targets.probes, targets.servers, left.cut, sources, crossings)
    own = project_modules(root)
    mine = sorted({t.module for t in targets.probes if t.module.split(".")[0] in own})
    if mine:  # the project's own package (an SDK's own repository): never imported
        sources.append(
            Source.skipped(
                "smoke",
                "own modules",
                f"not imported: {', '.join(mine[:8])}{' ...' if len(mine) > 8 else ''} "
                "(the project's own code, which the smoke run does not run)",
            )
        )
        targets.probes = [t for t in targets.probes if t.module.split(".")[0] not in own]
    scratch = str(make_scratch("agentguard-smoke-"))
    try:
        probes: list[Probe] = []
        not_started: list[NotStarted] = []
        versions: tuple[tuple[str, str], ...] = ()
        # the servers started by a launcher (npx, uvx) run beside the install; the probe
        # child and the `python -m` servers once it is done (each thread waits on a process)
        # (an interrupt ends the children first: the pool then waits on no deadline)
        with ThreadPoolExecutor(max_workers=4) as pool, ended_on_interrupt():
            launched, rest = _split(targets.servers)
            started = _start_servers(
                pool, root, launched, None, scratch, opts, clock, sources, not_started
            )
            installed, python, src = install(
                root, scratch, requires_python, opts.index, clock.within(opts.timeout * 0.8)
            )
            sources.append(src)
            child = None
            if python is not None and targets.probes:
                budget = clock.budget(opts.probe_timeout)
                child = pool.submit(
                    _run_probes,
                    python,
                    targets.probes,
                    scratch,
                    budget.seconds,
                    budget.cut,
                    time.monotonic() + budget.seconds,
                )
            elif targets.probes:
                sources.append(
                    Source.skipped(
                        "smoke",
                        "agent code",
                        f"the lock was not installed: {len(targets.probes)} import/server "
                        "probe(s) not tried",
                    )
                )
            elif python is not None:
                sources.append(
                    Source.skipped(
                        "smoke",
                        "agent code",
                        "the project's code imports no agent SDK or MCP library: nothing to import",
                    )
                )
            started += _start_servers(
                pool, root, rest, python, scratch, opts, clock, sources, not_started
            )
            if child is not None:
                got, versions, not_tried = child.result()
                sources += not_tried
                for probe in got:
                    if _probe_api_missing(probe):
                        crash = probe.crash
                        assert crash is not None
                        sources.append(
                            Source.skipped(
                                "smoke",
                                f"{probe.kind} {probe.subject}",
                                f"not tried: the probe builds the server with the 1.x API, which "
                                f"{probe.package or 'the library'} {probe.version or ''} does not "
                                f"have ({crash.exc_type}: {crash.message}); the project's code "
                                "may use the API of its version",
                            )
                        )
                    else:
                        probes.append(probe)
            for label, future, cut in started:
                probe = future.result()
                if cut and probe.timed_out:  # not its hang: the run gave it less time
                    asked = "tools/list" if probe.stage == "list-tools" else probe.stage
                    what = f"stopped waiting for its answer to {asked}"
                    sources.append(cut_short("mcp-server", label, what, cut))
                    not_started.append(
                        NotStarted(probe.subject, probe.path or "", probe.line or 0, cut,
                                   probe.lock_key)
                    )  # fmt: skip
                    continue
                probes.append(probe)
                if probe.status == NEEDS_CREDENTIALS:
                    sources.append(
                        Source.skipped("mcp-server", label, f"needs credentials: {probe.detail}")
                    )
                else:
                    sources.append(
                        Source.ok("mcp-server", label, f"started: {probe.status}: {probe.detail}")
                    )
    finally:
        remove_scratch(scratch)
    for p in probes:
        if p.kind != "stdio":
            sources.append(Source.ok("smoke", f"{p.kind} {p.subject}", f"{p.status}: {p.detail}"))
    facts = SmokeFacts(
        str(root), installed, tuple(probes), crossings, versions, not_started=tuple(not_started)
    )
    return facts, sources


def _probe_api_missing(probe: Probe) -> bool:
    """A FastMCP or ``mcp`` Server probe that failed in agentguard's own probe code (no
    frame of a package): the library's API is not the one the probe speaks. The SDK's
    ``create_sdk_mcp_server`` is the SDK's own call, so its crash is always the SDK's."""
    crash = probe.crash
    return (
        probe.kind in ("fastmcp", "mcp-server")
        and probe.status == FAILED
        and crash is not None
        and crash.frame is None
    )


def _split(servers: list[McpServer]) -> tuple[list[McpServer], list[McpServer]]:
    from agentguard.smoke.stdio import LAUNCHERS

    def launcher(s: McpServer) -> bool:
        return isinstance(s.command, str) and os.path.basename(s.command) in LAUNCHERS

    return [s for s in servers if launcher(s)], [s for s in servers if not launcher(s)]


def _start_servers(
    pool: ThreadPoolExecutor,
    root: Path,
    servers: list[McpServer],
    python: str | None,
    scratch: str,
    opts: SmokeOptions,
    clock: Clock,
    sources: list[Source],
    not_started: list[NotStarted],
) -> list[tuple[str, Future[Probe], str | None]]:
    """Each stdio server agentguard can start, started in ``pool`` (with the run's deadline
    described when it is what bounds the server's time); the others skipped, or failed
    when the run's deadline left them no time."""
    from agentguard.smoke.stdio import launch_argv, lock_key, start_server

    def skip(server: McpServer, why: str, cut: str | None = None) -> None:
        label = f"{server.name} ({server.path})"
        if cut:
            sources.append(cut_short("mcp-server", label, "not started", cut))
        else:
            sources.append(Source.skipped("mcp-server", label, f"not started: {why}"))
        not_started.append(NotStarted(server.name, server.path, server.line, why, lock_key(server)))

    modules = project_modules(root)
    out: list[tuple[str, Future[Probe], str | None]] = []
    for server in servers:
        argv = launch_argv(server, python, modules, opts.index)
        label = f"{server.name} ({server.path})"
        if isinstance(argv, str):
            skip(server, argv)
            continue
        left = clock.budget()
        if left.seconds < 5:
            skip(server, left.cut or "the smoke run's deadline passed", left.cut)
            continue
        budget = clock.budget(opts.server_timeout)
        cwd = os.path.join(scratch, "tmp")
        # its deadline is fixed now: a server queued behind others (the pool's threads are
        # fewer than the servers) does not get its time again when a thread gets to it
        ends = time.monotonic() + budget.seconds
        future = pool.submit(start_server, server, argv, scratch, cwd, budget.seconds, ends)
        out.append((label, future, budget.cut))
    return out


def _not_run(
    root: Path,
    probes: list[Target],
    servers: list[McpServer],
    cut: str,
    sources: list[Source],
    crossings: tuple[Crossing, ...],
) -> tuple[SmokeFacts, list[Source]]:
    """The run's deadline passed before the smoke run began: it fails, and so does each
    thing it would have started (its tools are not compared: the server was not started)."""
    from agentguard.smoke.stdio import lock_key

    sources.append(cut_short("smoke", "smoke run", "not started", cut))
    for t in probes:
        sources.append(cut_short("smoke", f"{t.kind} {t.module}", "not tried", cut))
    not_started = []
    for server in servers:
        label = f"{server.name} ({server.path})"
        sources.append(cut_short("mcp-server", label, "not started", cut))
        not_started.append(NotStarted(server.name, server.path, server.line, cut, lock_key(server)))
    facts = SmokeFacts(str(root), None, (), crossings, not_started=tuple(not_started))
    return facts, sources


def _run_probes(
    python: str,
    targets: list[Target],
    scratch: str,
    timeout: float,
    cut: str | None = None,
    ends: float | None = None,
) -> tuple[list[Probe], tuple[tuple[str, str], ...], list[Source]]:
    """Every probe in a child of the scratch interpreter; a child that dies or hangs on one
    is started again for the rest (the one it was running is the failure). ``cut``: the
    run's deadline, described, when it is what bounds ``timeout``: then a probe it stopped,
    and each one not tried, is a failed source, not a failure of the package. ``ends``:
    when the time ends (time.monotonic(), fixed when the probes were queued), else
    ``timeout`` seconds from now."""
    from agentguard import safeio

    script = Path(__file__).with_name("probe_child.py").read_text(encoding="utf-8")
    safeio.write_in(scratch, "probe_child.py", script)
    todo = {i: t for i, t in enumerate(targets)}
    results: dict[int, Probe] = {}
    skipped: list[Source] = []
    versions: tuple[tuple[str, str], ...] = ()
    ends = time.monotonic() + timeout if ends is None else ends
    attempt = 0
    ran: Ran | None = None
    while todo and attempt <= len(targets):
        attempt += 1
        spec = [
            {"id": i, "kind": t.kind, "module": t.module, "names": list(t.names)}
            for i, t in todo.items()
        ]
        safeio.write_in(scratch, "spec.json", json.dumps(spec))
        out_name = f"out-{attempt}.jsonl"
        safeio.write_in(scratch, out_name, "")
        left = ends - time.monotonic()
        if left <= 1:
            break
        ran = run(
            [
                python,
                "-I",
                os.path.join(scratch, "probe_child.py"),
                os.path.join(scratch, "spec.json"),
                os.path.join(scratch, out_name),
            ],
            cwd=os.path.join(scratch, "tmp"),
            env=child_env(scratch),
            timeout=left,
        )
        started: int | None = None
        try:  # written by the child, where the project's packages run: bounded, maybe junk
            lines = safeio.read_text(
                os.path.join(scratch, out_name), root=scratch, cap=16 * 1024 * 1024
            ).splitlines()
        except (OSError, UnicodeDecodeError):
            lines = []
        for line in lines:
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if not isinstance(rec, dict):
                continue
            if "versions" in rec:
                versions = tuple((str(n), str(v)) for n, v in rec["versions"])
            elif "start" in rec:
                started = int(rec["start"])
            elif "done" in rec and int(rec["done"]) in todo:
                i = int(rec["done"])
                results[i] = _probe(todo.pop(i), rec, ran.output, scratch)
                started = None
        if started is not None and started in todo and cut and ran.timed_out:
            t = todo.pop(started)
            what = f"the probe was stopped after {ran.seconds:.1f} s"
            skipped.append(cut_short("smoke", f"{t.kind} {t.module}", what, cut))
        elif started is not None and started in todo:
            t = todo.pop(started)
            why = (
                f"the probe did not finish within {timeout:g} s"
                if ran.timed_out
                else f"the child process died (status {ran.code}) while running it"
            )
            results[started] = Probe(
                t.kind,
                t.module,
                FAILED,
                "import" if t.kind == "import" else "construct",
                t.path,
                t.line,
                why,
                output=tail(ran.output),
            )
        elif todo and (ran.timed_out or ran.code != 0):
            break
    out_of_time = ran is None or ran.timed_out or ends - time.monotonic() <= 1
    for i, t in todo.items():  # never reported on: the child did not get to them
        if out_of_time and cut:  # the run's deadline: the run is incomplete
            skipped.append(cut_short("smoke", f"{t.kind} {t.module}", "not tried", cut))
            continue
        if out_of_time:  # not tried (a slow machine is not a broken lock)
            skipped.append(
                Source.skipped(
                    "smoke",
                    f"{t.kind} {t.module}",
                    f"not tried: the probes' deadline ({timeout:g} s) passed before it",
                )
            )
            continue
        assert ran is not None
        results[i] = Probe(
            t.kind,
            t.module,
            FAILED,
            "start",
            t.path,
            t.line,
            f"the scratch interpreter ended without running the probe (status {ran.code})",
            output=tail(ran.output),
        )
    return [results[i] for i in sorted(results)], versions, skipped


def _probe(t: Target, rec: dict[str, object], output: str, scratch: str) -> Probe:
    crash = None
    raw = rec.get("crash")
    if isinstance(raw, dict):
        # the scratch folder is gone after the run: a path in it is named by its package
        roots = "|".join(re.escape(r) for r in {scratch, os.path.realpath(scratch)})
        site = re.compile(f"(?:{roots})" + r"/venv/lib/python[0-9.]+/site-packages/")
        raw = {
            k: site.sub("site-packages/", v) if isinstance(v, str) else v for k, v in raw.items()
        }
        fields = {
            k: (str(v) if v is not None else None)
            for k, v in raw.items()
            if k in Crash.__dataclass_fields__
        }
        crash = Crash(**fields)  # type: ignore[arg-type]
    status = str(rec.get("status"))
    tools = rec.get("tools")
    detail = str(rec.get("detail", "")) if crash is None else f"{crash.exc_type}: {crash.message}"
    return Probe(
        kind=t.kind,
        subject=t.module,
        status=status,
        stage=str(rec.get("stage", "list-tools" if t.kind != "import" else "import")),
        path=t.path,
        line=t.line,
        detail=detail,
        tools=tuple(str(x) for x in tools) if isinstance(tools, list) else None,
        crash=crash,
        package=str(rec["package"]) if rec.get("package") else None,
        version=str(rec["version"]) if rec.get("version") else None,
        output=tail(output) if status != "ok" else (),
    )
