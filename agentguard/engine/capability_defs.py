"""The map entry of the agents a framework's constructors define in one file, when the
readers the rules use saw no shell, file or web tool there.

One entry per file and framework, as for the tools another framework hands a model (a
test file defines hundreds): each definition is a ``declared`` tools row with its line,
the first :data:`ROWS` of them one by one, the others in one row that names their lines.
Its tools are what each call hands, as written; nothing here says it has none (a tool
list computed at run time, or tools added in other ways, are not read: unknown; tools other
files decorate onto it or it imports are joined by the reader).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from agentguard.facts.agents import MAX_TOOL_DEFS, AgentDefinition, ProjectFacts, ToolDef
from agentguard.facts.capabilities import (
    DECLARED,
    DEFINITION,
    FUNCTION,
    LIVE,
    UNKNOWN,
    AgentCapability,
    AgentSite,
    Evidence,
    ModelChoice,
    ToolAccess,
)
from agentguard.findings import Confidence

ROWS = 10  # definitions of one file drawn one by one; the rest share one row

# (number, site, tools, model) -> the entry, joined to its containers and folder
Draw = Callable[[int, AgentSite, tuple[ToolAccess, ...], ModelChoice], AgentCapability]


def definition_agents(
    drawn: int,
    granted: set[tuple[str, str]],
    facts: ProjectFacts,
    draw: Draw,
) -> list[AgentCapability]:
    """One entry per file and framework, numbered after the ``drawn`` entries; a file
    whose agent is drawn with its risky tools (``granted``: its file and framework) is
    not drawn twice."""
    by_file: dict[tuple[str, str], list[AgentDefinition]] = {}
    for d in facts.definitions:
        if (d.path, d.framework) not in granted:
            by_file.setdefault((d.path, d.framework), []).append(d)
    return [definition_agent(drawn + i, defs, draw) for i, defs in enumerate(by_file.values(), 1)]


def definition_notes(facts: ProjectFacts) -> tuple[str, ...]:
    """The files that define more agents than the per-file cap keeps (the map says so)."""
    return tuple(
        f"{path} defines {n} agents: only the first {len(facts.definitions_of(path))} are read"
        for path, n in facts.definitions_cut
    )


def definition_agent(n: int, defs: Sequence[AgentDefinition], draw: Draw) -> AgentCapability:
    first = defs[0]
    counts = Counter(d.label for d in defs)
    label = ", ".join(f"{lb} x{k}" if k > 1 else lb for lb, k in counts.items())
    site = AgentSite(DEFINITION, first.framework, label, _ev(first))
    rows = [
        r for d in defs[:ROWS] for r in (_tools(d, len(defs) > 1), *map(_function, d.tool_defs))
    ]
    if len(defs) > ROWS:
        rest = defs[ROWS:]
        rows.append(
            ToolAccess(
                DECLARED,
                UNKNOWN,
                (),
                UNKNOWN,
                tuple(_ev(d) for d in rest),
                Confidence.LOW,
                how=f"{len(rest)} more definitions in this file, not drawn one by one",
            )
        )
    return draw(n, site, tuple(rows), _model(defs))


def _ev(d: AgentDefinition) -> Evidence:
    return Evidence(d.path, d.line, d.callee)


def _tools(d: AgentDefinition, named: bool) -> ToolAccess:
    if d.tools is not None and d.tools_set:
        how = f"tools as written: {', '.join(d.tools) or 'an empty list'}"
        confidence = Confidence.MEDIUM  # (what each named tool does is not read)
    elif d.tools_set:
        how = f"tools = {d.tools_expr}: computed, not read"
        confidence = Confidence.LOW
    elif d.tools is None:
        how = "what it can do is its framework's (not read)"
        confidence = Confidence.LOW
    else:
        how = "no tools handed here (tools added in other ways are not read)"
        confidence = Confidence.LOW
    decorated = [t for t in d.tool_defs if t.via.startswith("@") and "." in t.via]
    here = [t.name for t in decorated if t.path == d.path]
    there = [f"{t.name} ({t.path})" for t in decorated if t.path != d.path]
    adds = "; ".join(
        [f"its decorators in this file add {', '.join(here)}"] * bool(here)
        + [f"its decorators in other files add {', '.join(there)}"] * bool(there)
    )
    if decorated and not d.tools_set:
        how = f"no tools handed in the call; {adds} (tools added in other ways are not read)"
    elif decorated:
        how += f"; {adds}"
    if d.tools_cut:
        how += (
            f"; and {d.tools_cut} more tool functions, not drawn (over the cap of {MAX_TOOL_DEFS})"
        )
    if d.builtin:
        how += f"; it {d.builtin}"
    if named:  # (one of several in the file: which one)
        how = f"{d.label} at line {d.line}: {how}"
    return ToolAccess(DECLARED, UNKNOWN, d.tools or (), UNKNOWN, (_ev(d),), confidence, how=how)


def function_rows(path: str, framework: str, facts: ProjectFacts) -> list[ToolAccess]:
    """The tool functions of the definitions of one file and framework, for the entry that
    draws that file with its risky tools (its definitions are not drawn on their own)."""
    tools = (t for d in facts.definitions_of(path) if d.framework == framework for t in d.tool_defs)
    return [_function(t) for t in dict.fromkeys(tools)]  # (one tool handed to two agents: once)


def _function(t: ToolDef) -> ToolAccess:
    """One tool function: what its own body is seen to call (none seen: unknown)."""
    ev = (
        Evidence(t.path, t.line, f"{t.via} {t.name}"),
        *(Evidence(t.path, line, f"{kind}: {callee}") for kind, callee, line in t.effects),
    )
    if not t.body:
        how = f"{t.via}: not one def there (a wrapped function, a class, a value, or bound twice): what it runs is not read"
        return ToolAccess(FUNCTION, UNKNOWN, (t.name,), UNKNOWN, ev, Confidence.LOW, how=how)
    if t.effects:
        calls = ", ".join(f"{q} ({c}, line {line})" for c, q, line in t.effects)
        how = f"{t.via} {t.name}: its body calls {calls}"
        return ToolAccess(FUNCTION, LIVE, (t.name,), UNKNOWN, ev, Confidence.MEDIUM, how=how)
    how = f"{t.via} {t.name}: no shell, file or network call seen in its body (what it calls: unknown)"
    return ToolAccess(FUNCTION, UNKNOWN, (t.name,), UNKNOWN, ev, Confidence.LOW, how=how)


def _model(defs: Sequence[AgentDefinition]) -> ModelChoice:
    """The models the calls name: set when each names a literal, else unknown."""
    ev = tuple(
        Evidence(d.path, d.line, f"model = {d.model_expr}" if d.model_expr else "no model given")
        for d in defs[:ROWS]
    )
    if all(d.model is not None for d in defs):
        models = tuple(dict.fromkeys(d.model for d in defs if d.model is not None))
        return ModelChoice(models, "set", ev)
    return ModelChoice((), UNKNOWN, ev)
