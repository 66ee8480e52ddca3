"""The capability map as a Mermaid flowchart (GitHub renders it in a job summary and a pull
request comment): agents, the containers or jobs that run them, their working folders,
tools, MCP servers and secrets; hazards drawn red and named by rule id.

Node ids are agentguard's own (``a1``, ``r2``...); every label is built from redacted text
and written through :func:`agentguard.escape.mermaid_label`, so no name from the scanned
project can end a label, open HTML or Markdown, or add a node or an edge.
"""

from __future__ import annotations

from agentguard import escape, redact
from agentguard.facts.capabilities import (
    KUBERNETES,
    LIVE,
    MAYBE,
    AgentCapability,
    CapabilityMap,
)
from agentguard.facts.host_paths import DOCKER_SOCKET
from agentguard.findings import Report
from agentguard.report.map_text import runner_text, sentence, workdir_text


def _label(*parts: str) -> str:
    return "<br/>".join(escape.mermaid_label(redact.text(p)) for p in parts if p)


class _Graph:
    def __init__(self) -> None:
        self.lines: list[str] = ["flowchart LR"]
        self.ids: dict[tuple[str, str], str] = {}
        self.hazard_nodes: list[str] = []

    def node(self, key: tuple[str, str], shape: tuple[str, str], *label: str,
             hazard: bool = False) -> str:  # fmt: skip
        if key in self.ids:
            return self.ids[key]
        nid = f"{key[0][0]}{len(self.ids) + 1}"
        self.ids[key] = nid
        self.lines.append(f'  {nid}{shape[0]}"{_label(*label)}"{shape[1]}')
        if hazard:
            self.hazard_nodes.append(nid)
        return nid

    def edge(self, a: str, b: str, text: str, *, hazard: bool = False) -> None:
        arrow = "==>" if hazard else "-->"
        self.lines.append(f'  {a} {arrow}|"{_label(text)}"| {b}')


_CONTAINER_RULES = frozenset({"AG403", "AG405"})
_AGENT = ("[", "]")
_RUNNER = ("[[", "]]")
_FOLDER = ("[(", ")]")
_TOOL = ("{{", "}}")
_MCP = ("([", "])")
_SECRET = (">", "]")


def _boxed(g: _Graph, agents: tuple[AgentCapability, ...]) -> None:
    """Several agents: each in a box of its own (a subgraph), so its nodes stay together
    and no edge of another agent runs across them (a node two agents share is drawn in one
    of their boxes). The boxes are written last agent first: the layout engine stacks
    unconnected boxes from the bottom up in the order written, so agent-1 is drawn on top."""
    blocks: list[list[str]] = []
    for n, a in enumerate(agents, 1):
        start = len(g.lines)
        _agent(g, a)
        blocks.append([f'  subgraph g{n}["{_label(a.id)}"]', *g.lines[start:], "  end"])
        del g.lines[start:]
    g.lines += [line for block in reversed(blocks) for line in block]


def _agent(g: _Graph, a: AgentCapability) -> None:
    hz = {h.rule_id for h in a.hazards}
    at = (
        f"{a.site.evidence.path}:{a.site.evidence.line}"
        if a.site.evidence.line
        else a.site.evidence.path
    )
    nid = g.node(("agent", a.id), _AGENT, f"{a.id}: {a.site.engine}", at)
    host = nid
    for r in a.runners:
        # what the Kubernetes rules report on the container itself (privileged, host namespaces)
        held = [h for h in a.hazards if h.rule_id in _CONTAINER_RULES
                and h.evidence.path == r.evidence[0].path] if r.kind == KUBERNETES else []  # fmt: skip
        said = ", ".join(dict.fromkeys(f"{h.text} ({h.rule_id})" for h in held))
        rid = g.node(("runner", f"{r.kind}:{r.name}"), _RUNNER, runner_text(r), said,
                     hazard=bool(held))  # fmt: skip
        g.edge(nid, rid, "runs in", hazard=bool(held))
        host = rid if len(a.runners) == 1 else nid
    w = a.workdir
    wd_hazard = bool(hz & {"AG202", "AG210"})
    wid = g.node(
        ("folder", f"{host}:{w.path}:{w.holds_kind}:{w.host_source}"), _FOLDER,
        workdir_text(w), hazard=wd_hazard,
    )  # fmt: skip
    g.edge(nid, wid, "works in", hazard=wd_hazard)
    for t in a.tools:
        if t.state not in (LIVE, MAYBE):
            continue
        bad = t.category == "shell" or t.approval == "bypass"
        tid = g.node(("tool", f"{a.id}:{t.category}"), _TOOL,
                     f"{t.category}: {', '.join(t.tools)}", t.approval, hazard=bad)  # fmt: skip
        g.edge(nid, tid, "can use" if t.state == LIVE else "may use", hazard=bad)
    for m in a.mcp:
        bad = m.pinned is False
        pin = {True: "pinned", False: "unpinned (AG310)", None: "pinned: unknown"}[m.pinned]
        if m.launch == "in-process":
            pin = "in this process"
        launch = " ".join(m.command) or m.launch
        mid = g.node(("mcp", f"{m.name}:{launch}"), _MCP, f"MCP {m.name}", launch, pin, hazard=bad)
        g.edge(nid, mid, "talks to", hazard=bad)
    for s in a.secrets:
        sid = g.node(("secret", s.name), _SECRET, f"secret {s.name}")
        g.edge(host, sid, "gets")
    for p in a.paths:  # the Docker socket and credentials folders (AG203, AG204)
        if p.sensitive:
            rule = "AG203" if p.sensitive.startswith(DOCKER_SOCKET) else "AG204"
            pid = g.node(("path", f"{host}:{p.source}:{p.target}"), _FOLDER,
                         f"{p.sensitive} ({rule})", f"{p.source} -> {p.target}", hazard=True)  # fmt: skip
            g.edge(host, pid, "mounts", hazard=True)
    for f in a.model.fallbacks:
        if f.witnessed is False:
            fid = g.node(("fallback", f"{a.id}:{f.evidence[0].line}"), _MCP, "falls back to",
                         ", ".join(f.models) or "another model", "silently (AG320)",
                         hazard=True)  # fmt: skip
            g.edge(nid, fid, "on failure", hazard=True)


def render_map_mermaid(m: CapabilityMap | None) -> str:
    g = _Graph()
    if m is None or not m.agents:
        g.lines.append(f'  none["{_label("no agent found")}"]')
    else:
        _boxed(g, m.agents) if len(m.agents) > 1 else _agent(g, m.agents[0])
    if g.hazard_nodes:
        g.lines.append("  classDef hazard fill:#fde2e2,stroke:#c0392b,stroke-width:2px")
        g.lines.append(f"  class {','.join(g.hazard_nodes)} hazard")
    return "\n".join(g.lines) + "\n"


def mermaid_markdown(m: CapabilityMap | None) -> str:
    """The diagram as a Markdown fenced block (for a job summary or a comment)."""
    body = render_map_mermaid(m)
    return "```mermaid\n" + body + "```\n"


def render_map_markdown(report: Report, m: CapabilityMap | None) -> str:
    """A job summary or a pull request comment: one line per agent (the sentence), the
    diagram, and the sources that failed. Data goes through the redactor and the Markdown
    escaper; the diagram's labels hold no backtick, so no label can close its fence."""
    target = redact.text(report.provenance.target or "")
    lines = [f"## agentguard map of {escape.md_code(target)}", ""]
    agents = m.agents if m is not None else ()
    if not agents:
        lines.append("No agent found.")
    for a in agents:
        lines.append(f"- **{a.id}**: {escape.md_text(sentence(a))}")
    lines += ["", *mermaid_markdown(m).splitlines(), ""]
    failed = report.failed_sources
    if failed:
        lines.append(
            f"**Incomplete**: {len(failed)} source(s) could not be read; the map may miss agents."
        )
        lines += [
            f"- {escape.md_code(redact.text(s.name))}: {escape.md_text(redact.text(s.reason or ''))}"
            for s in failed
        ]
    else:
        lines.append(f"{len(report.sources)} sources read, none failed.")
    return "\n".join(lines) + "\n"
