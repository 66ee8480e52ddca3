"""What a change gives or takes from each agent, as a Mermaid flowchart for the job summary
and the pull request comment of ``check --base``: one node per changed agent, an edge to
each capability it gains (thick, red when the policy's growth kinds name it) and a dotted
edge to each it loses. Built from the delta's JSON (:mod:`agentguard.delta.capabilities`);
labels go through the redactor and :func:`agentguard.escape.mermaid_label`, node ids are
agentguard's own, so no name from the repository can end a label or add a node or edge."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentguard import escape, redact

_LISTED = 40  # changes drawn per agent; the rest are counted in one node


def _label(text: str) -> str:
    return escape.mermaid_label(redact.text(text))


def render_delta_mermaid(delta: Mapping[str, Any]) -> str | None:
    """The diagram, or None when the change gives and takes nothing from any agent (or the
    maps were not compared: nothing to draw, and the summary says which)."""
    caps = delta.get("capabilities")
    agents = (caps or {}).get("agents") or []
    if not agents:
        return None
    lines = ["flowchart LR"]
    grown: list[str] = []
    n = 0
    for i, a in enumerate(agents, 1):
        aid = f"a{i}"
        lines.append(
            f'  {aid}["{_label(str(a.get("agent", "")))}<br/>{_label(str(a.get("status", "")))}"]'
        )
        growth = {(g.get("what") or "") for g in a.get("growth") or []}
        drawn = 0
        for aspect, change in (a.get("changes") or {}).items():
            what = str(aspect).replace("_", " ")
            for sign, items in (
                ("+", change.get("added") or []),
                ("-", change.get("removed") or []),
            ):
                for item in items:
                    drawn += 1
                    if drawn > _LISTED:
                        continue
                    n += 1
                    cid = f"c{n}"
                    lines.append(f'  {cid}["{_label(f"{sign} {what}: {item}")}"]')
                    if sign == "+":
                        lines.append(f'  {aid} ==>|"{_label("gains")}"| {cid}')
                        if any(g and g in str(item) for g in growth):
                            grown.append(cid)
                    else:
                        lines.append(f'  {aid} -.->|"{_label("loses")}"| {cid}')
        if drawn > _LISTED:
            n += 1
            lines.append(f'  c{n}["{_label(f"and {drawn - _LISTED} more changes")}"]')
            lines.append(f"  {aid} --- c{n}")
    if grown:
        lines.append("  classDef growth fill:#fde2e2,stroke:#c0392b,stroke-width:2px")
        lines.append(f"  class {','.join(grown)} growth")
    return "\n".join(lines) + "\n"
