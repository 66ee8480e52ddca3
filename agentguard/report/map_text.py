"""The capability map for people: one block per agent, a sentence and then each edge with
its evidence (file:line) and, where it is not high, its confidence.

Every value from the scanned project goes through the redactor and the terminal escaper
(:func:`_v`); the block's own words are agentguard's.
"""

from __future__ import annotations

import functools

from agentguard import escape, redact
from agentguard.facts.capabilities import (
    ASKED,
    BYPASS,
    COMPOSE_SERVICE,
    DECLARED,
    DEFINITION,
    DOCKERFILE,
    EMPTY,
    FUNCTION,
    HOST_FOLDER,
    IMAGE,
    IMAGE_CONTENT,
    KUBERNETES,
    LIVE,
    MAYBE,
    PRE_APPROVED,
    PROJECT,
    REMOVED,
    SUBFOLDER,
    UNKNOWN,
    WORKFLOW_JOB,
    AgentCapability,
    CapabilityMap,
    Evidence,
    McpLink,
    Runner,
    ToolAccess,
    Workdir,
)
from agentguard.findings import Confidence, Report


def _v(s: str | None) -> str:
    return _shown(s) if s is not None else "unknown"


@functools.lru_cache(maxsize=16384)
def _shown(s: str) -> str:  # (a map repeats its paths and notes: each is escaped once)
    return escape.terminal(redact.text(s))


def _at(evidence: tuple[Evidence, ...]) -> str:
    seen = dict.fromkeys(_v(e.path) + (f":{e.line}" if e.line else "") for e in evidence)
    return "[" + ", ".join(seen) + "]" if seen else "[no evidence: not read]"


def _conf(c: Confidence) -> str:
    return "" if c is Confidence.HIGH else f" ({c.value} confidence)"


def runner_text(r: Runner) -> str:
    if r.kind == COMPOSE_SERVICE:
        text = f"compose service {_v(r.name)}"
        if r.dockerfile:
            text += f", from the image built by {_v(r.dockerfile)}"
        elif r.image:
            text += f", image {_v(r.image)}"
        return text
    if r.kind == KUBERNETES:
        text = f"Kubernetes {_v(r.name)}"
        if r.dockerfile:
            text += f", from the image built by {_v(r.dockerfile)}"
        elif r.image:
            text += f", image {_v(r.image)}"
        return text
    if r.kind == DOCKERFILE:
        return f"the image built by {_v(r.name)}"
    if r.kind == IMAGE:
        return f"image {_v(r.name)}"
    if r.kind == WORKFLOW_JOB:
        text = f"workflow job {_v(r.name)} on {', '.join(_v(t) for t in r.triggers) or 'unknown'}"
        if r.open_triggers is None:
            text += " (who can trigger it: not read)"
        elif r.open_triggers:
            text += f" (anyone can trigger it: {', '.join(_v(t) for t in r.open_triggers)})"
        else:
            text += " (only people with write access trigger it)"
        return text
    return f"{_v(r.kind)} {_v(r.name)}"


def workdir_text(w: Workdir) -> str:
    where = _v(w.path) if w.path else "an unknown folder"
    if w.holds_kind == HOST_FOLDER:
        text = f"{where}, which is the host folder {_v(w.host_source)}"
    elif w.holds_kind == PROJECT:
        text = f"{where}, which is the project folder"
    elif w.holds_kind == SUBFOLDER:
        text = f"{where}, a folder of the project"
    elif w.holds_kind == IMAGE_CONTENT:
        text = f"{where}, which holds what the image put there"
    elif w.holds_kind == EMPTY:
        text = f"{where}, which holds nothing agentguard knows of"
    else:
        text = f"{where} (what is there: unknown)"
    if w.holds_known and w.holds:
        text += f" (it holds {', '.join(_v(h) for h in w.holds)})"
    return text


_WRITE_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})


def _ability(t: ToolAccess) -> str:
    if t.category == "shell":
        return "run " + ("Bash" if "Bash" in t.tools else ", ".join(_v(n) for n in t.tools))
    if t.category == "file":
        writes = _WRITE_TOOLS & set(t.tools) or any("write" in n.lower() for n in t.tools)
        return "read and write files" if writes else "read files"
    if t.category == "web":
        return "fetch the web"
    return "use " + ", ".join(_v(n) for n in t.tools)


def _abilities(tools: tuple[ToolAccess, ...]) -> str:
    parts = [
        _ability(t) + (" (maybe)" if t.state == MAYBE else "")
        for t in tools
        if t.state in (LIVE, MAYBE)
    ]
    return ", ".join(dict.fromkeys(parts))


def _mcp_short(m: McpLink) -> str:
    if m.launch == "in-process":
        return f"{_v(m.name)} (in-process)"
    launch = _v(m.command[0]) if m.command else _v(m.launch)
    pin = {True: "pinned", False: "unpinned", None: "pinned: unknown"}[m.pinned]
    return f"{_v(m.name)} ({launch}, {pin})"


def sentence(a: AgentCapability) -> str:
    """The one sentence of the issue: where, what runs it, where it works, what it can do,
    whom it talks to, and what happens when its model fails."""
    s = f"The agent in {_at((a.site.evidence,))[1:-1]} ({_v(a.site.engine)})"
    defined = sum(len(t.evidence) for t in a.tools if t.category == DECLARED)
    if a.site.kind == DEFINITION and defined > 1:
        s = f"The {defined} agents in {_v(a.site.evidence.path)} ({_v(a.site.engine)})"
    if a.runners:
        s += ", running in " + " or ".join(runner_text(r) for r in a.runners)
    s += f", works in {workdir_text(a.workdir)}"
    if a.site.kind == DEFINITION:
        runs = _function_runs(a.tools)
        s += f"; its tool functions run {runs} (seen in their bodies)" if runs else ""
        s += "; no shell, file or web tool seen" if not runs else ""
    elif a.tools_known:
        ab = _abilities(a.tools)
        s += f"; it can {ab}" if ab else "; it has no built-in tools"
    else:
        s += "; its tools are not read"
    if a.mcp:
        s += "; it talks to MCP servers " + ", ".join(_mcp_short(m) for m in a.mcp)
    for f in a.model.fallbacks:
        models = ", ".join(_v(m) for m in f.models) or "another model"
        tail = {False: "says nothing", True: "leaves a witness", None: "may say nothing"}
        s += f"; when the primary model fails it answers with {models} and {tail[f.witnessed]}"
    return s + "."


def _function_runs(tools: tuple[ToolAccess, ...]) -> str:
    """``name (shell, file), other (network)`` for the tool functions whose bodies are
    seen to make such calls (their evidence notes: "shell: subprocess.run")."""
    parts = []
    for t in tools:
        if t.category == FUNCTION and t.state == LIVE:
            kinds = dict.fromkeys(e.note.split(":", 1)[0] for e in t.evidence[1:])
            parts.append(f"{', '.join(_v(n) for n in t.tools)} ({', '.join(kinds)})")
    return ", ".join(dict.fromkeys(parts))


def _tool_line(t: ToolAccess) -> str:
    state = {LIVE: "live", REMOVED: "removed", MAYBE: "maybe live", UNKNOWN: "unknown"}
    appr = {PRE_APPROVED: "pre-approved", ASKED: "asked", BYPASS: "bypass: never asked"}
    if t.category == DECLARED:  # a definition's tools: as written, never "none"
        return f"no built-in shell/file/web tool seen; {_v(t.how)}{_conf(t.confidence)}  {_at(t.evidence)}"
    if t.category == FUNCTION:  # one tool function: what its body is seen to call
        return f"tool {_v(t.how)}{_conf(t.confidence)}  {_at(t.evidence)}"
    names = ", ".join(_v(n) for n in t.tools)
    text = f"{_v(t.category)}: {state.get(t.state, _v(t.state))} ({names})"
    if t.state != REMOVED:
        text += f", {appr.get(t.approval, 'approval unknown')}"
    return f"{text}{_conf(t.confidence)}  {_at(t.evidence)}"


def agent_block(a: AgentCapability) -> list[str]:
    lines = [f"{a.id}: {sentence(a)}"]

    def row(label: str, text: str) -> None:
        lines.append(f"  {label:<10}{text}")

    row("defined", f"{_v(a.site.label)}  {_at((a.site.evidence,))}")
    for r in a.runners:
        row("runs in", f"{runner_text(r)}{_conf(r.confidence)}  {_at(r.evidence)}")
        if r.kind == KUBERNETES:  # (its securityContext and serviceAccount, in words)
            row("", _v(r.how))
    if not a.runners:
        row("runs in", f"unknown: {_v(a.runner_note)}")
    elif a.runner_note:
        row("", _v(a.runner_note))
    w = a.workdir
    row("works in", f"{workdir_text(w)}{_conf(w.confidence)}  {_at(w.evidence)}")
    if not a.tools_known:
        row("tools", "unknown (not read for this engine)")
    for t in a.tools:
        row("tools", _tool_line(t))
    for p in a.paths:
        mode = {True: "read-write", False: "read-only", None: "writable: unknown"}[p.writable]
        extra = f", {_v(p.sensitive)}" if p.sensitive else ""
        row(
            "paths",
            f"{_v(p.source)} -> {_v(p.target)} ({_v(p.kind)}, {mode}{extra})  {_at(p.evidence)}",
        )
    net = a.reach.network_mode
    row("reach", f"network {_v(net) if net else 'unknown'}, web tools {_v(a.reach.web)}"
        f"{_conf(a.reach.confidence)}  {_at(a.reach.evidence)}")  # fmt: skip
    for m in a.mcp:
        argv = " ".join(_v(x) for x in m.command)
        pin = {True: "pinned", False: f"unpinned: {_v(m.unpinned_why)}", None: "pinned: unknown"}
        launch = f"{_v(m.launch)} `{argv}`" if argv else _v(m.launch)
        if m.launch == "in-process":
            row("mcp", f"{_v(m.name)}: in-process; {_v(m.how)}  {_at(m.evidence)}")
            continue
        row(
            "mcp",
            f"{_v(m.name)}: {launch}, {pin[m.pinned]}; {_v(m.how)}{_conf(m.confidence)}  {_at(m.evidence)}",
        )
    for s in a.secrets:
        row("secrets", f"{_v(s.name)} ({_v(s.via)})  {_at(s.evidence)}")
    mc = a.model
    primary = ", ".join(_v(x) for x in mc.primary) or (
        "the engine's default"
        if mc.primary_state == "default"
        else "unknown" + (f" ({_v(mc.evidence[0].note)})" if mc.evidence else "")
    )
    row("model", f"{primary}  {_at(mc.evidence)}")
    for f in mc.fallbacks:
        witness = {True: "leaves a witness", False: "silent", None: "witness: unknown"}[f.witnessed]
        models = ", ".join(_v(x) for x in f.models) or "unknown"
        row(
            "fallback",
            f"{models}, {witness} ({_v(f.kind)}){_conf(f.confidence)}  {_at(f.evidence)}",
        )
    for h in a.hazards:
        row("hazard", f"{h.rule_id} {_v(h.text)}  {_at((h.evidence,))}")
    return lines


def render_map_text(report: Report, m: CapabilityMap | None) -> str:
    lines: list[str] = []
    if m is None or not m.agents:
        lines.append(f"No agent found in {_v(report.provenance.target)}.")
    else:
        n = len(m.agents)
        lines.append(f"{n} agent{'s' if n != 1 else ''} in {_v(m.target)}:")
        for a in m.agents:
            lines += ["", *agent_block(a)]
    for note in m.notes if m is not None else ():
        lines.append(f"note: {_v(note)}")
    failed = report.failed_sources
    lines.append("")
    if failed:
        lines.append(
            f"INCOMPLETE: {len(failed)} source(s) could not be read, the map may miss agents:"
        )
        lines += [f"  {_v(s.name)}: {_v(s.reason or '')}" for s in failed]
    else:
        lines.append(f"{len(report.sources)} sources read, none failed.")
    return escape.commands("\n".join(lines) + "\n")
