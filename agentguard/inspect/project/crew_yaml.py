"""crewAI's ``config/agents.yaml``: the agents a ``@CrewBase`` class builds, with their
role, model and tools (facts for the map only; no rule reads them).

The YAML a class names (:class:`~agentguard.facts.agents.CrewClass`) is read through the
project's loader (below the project root, through the safe-open path, under the size
cap) and parsed as hostile YAML (the alias budget and depth caps of :mod:`.yaml_lined`).
Each top-level key whose value is a mapping is one agent: an
:class:`~agentguard.facts.agents.AgentDefinition` at its line, its ``llm`` the model when
a string, its ``tools`` the names as written (each joined to the class's ``@tool``
method of that name), ``allow_code_execution`` said in words. The class's own
``Agent(config=self.agents_config["x"], ...)`` call is that agent: it is folded into the
YAML's entry (its tools added, its line kept) instead of drawn a second time.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from agentguard.facts.agents import AgentDefinition, CrewClass, ToolDef
from agentguard.findings import Source
from agentguard.inspect.project.lined import DocumentError
from agentguard.inspect.project.outcome import failed_source

MAX_AGENTS = 100  # agents read from one file
_TEXT = 80

Loader = Callable[[str], bytes | None]


def _text(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    text = " ".join(value.split())
    return text if len(text) <= _TEXT else text[: _TEXT - 3] + "..."


def _yaml_path(crew: CrewClass) -> str | None:
    if crew.agents_config is None or crew.agents_config.startswith("/"):
        return None
    path = posixpath.normpath(posixpath.join(posixpath.dirname(crew.path), crew.agents_config))
    return None if path.startswith("../") or path == ".." else path


def crew_definitions(
    crews: Sequence[CrewClass], definitions: Sequence[AgentDefinition], load: Loader
) -> tuple[list[AgentDefinition], list[Source]]:
    """``definitions`` with each read agents.yaml's agents in, and the class's own
    ``Agent(config=...)`` calls folded into them; the YAML files' sources."""
    out = list(definitions)
    sources: list[Source] = []
    done: set[str] = set()
    for crew in crews:
        path = _yaml_path(crew)
        if path is None:
            sources.append(
                Source.skipped(
                    "file",
                    f"{crew.path}:{crew.line}",
                    f"crewAI class {crew.name}: its agents_config is "
                    f"{'computed' if crew.agents_config is None else 'outside the project'}"
                    ": its agents' YAML is not read",
                )
            )
            continue
        if path in done:
            continue
        done.add(path)
        data = load(path)
        if data is None:
            sources.append(
                Source.skipped(
                    "file",
                    path,
                    f"crewAI class {crew.name} ({crew.path}:{crew.line}) names it: not found, "
                    "not a regular file, or over the size cap; its agents are not drawn",
                )
            )
            continue
        got = _agents(path, data, crew)
        if isinstance(got, Source):
            sources.append(got)
            continue
        out = _fold(out, got, crew)
        sources.append(Source.ok("file", path, f"crewAI agents of {crew.name}: {len(got)}"))
    return out, sources


def _agents(path: str, data: bytes, crew: CrewClass) -> list[AgentDefinition] | Source:
    from agentguard.inspect.project.yaml_lined import load_yaml

    try:
        doc = load_yaml(data.decode("utf-8"))
    except UnicodeDecodeError:
        return failed_source(path, "not UTF-8 text", "bad-encoding")
    except DocumentError as exc:
        return failed_source(path, f"crewAI agents config: {exc}", "parse-error")
    if not isinstance(doc.value, dict):
        return failed_source(path, "crewAI agents config: not a mapping of agents", "bad-shape")
    methods = dict(crew.tool_methods)
    out: list[AgentDefinition] = []
    for name, body in doc.value.items():
        if not isinstance(body, dict) or len(out) >= MAX_AGENTS:
            continue
        key = str(name)
        tools_raw = body.get("tools")
        tools = (
            tuple(str(t)[:_TEXT] for t in tools_raw if isinstance(t, str | int))
            if isinstance(tools_raw, list)
            else None
        )
        role = _text(body.get("role"))
        out.append(
            AgentDefinition(
                "crewai",
                "crewai agents.yaml",
                f"{_text(key) or '?'} (agents.yaml)",
                path,
                doc.line(name) or 1,
                model=_text(body.get("llm")),
                model_expr=f"llm: {_text(body.get('llm'))}" if "llm" in body else "",
                tools=tools if "tools" in body else (),
                tools_expr=""
                if tools is not None or "tools" not in body
                else "tools: (not a list)",
                tools_set="tools" in body,
                builtin="; ".join(
                    p for p in (f"acts as {role}" if role else "", _code_execution(body)) if p
                ),
                tool_defs=tuple(
                    ToolDef(t, crew.path, methods[t], "@tool method")
                    for t in tools or ()
                    if t in methods
                ),
                config_key=key,
            )
        )
    return out


def _code_execution(body: dict[Any, Any]) -> str:
    allowed = body.get("allow_code_execution")
    if allowed is True:
        mode = body.get("code_execution_mode")
        where = {"unsafe": "on this machine", "safe": "in a Docker container"}.get(
            mode if isinstance(mode, str) else "", "(code_execution_mode: unknown)"
        )
        return f"runs the code it writes {where} (allow_code_execution: true)"
    if allowed is not None and allowed is not False:
        return "allow_code_execution is not a literal: whether it runs code is unknown"
    return ""


def _fold(
    out: list[AgentDefinition], yaml_agents: list[AgentDefinition], crew: CrewClass
) -> list[AgentDefinition]:
    """The YAML agents in place of the class file's ``Agent(config=...)`` calls of them."""
    by_key = {d.config_key: d for d in yaml_agents}
    folded: dict[str, list[AgentDefinition]] = {}
    kept: list[AgentDefinition] = []
    for d in out:
        if d.path == crew.path and d.framework == "crewai" and d.config_key in by_key:
            folded.setdefault(d.config_key or "", []).append(d)
        else:
            kept.append(d)
    for y in yaml_agents:
        calls = folded.get(y.config_key or "", [])
        if calls:
            y = _merged(y, calls)
        kept.append(y)
    return kept


def _merged(y: AgentDefinition, calls: list[AgentDefinition]) -> AgentDefinition:
    code_tools: list[str] = []
    computed = False
    for c in calls:
        if c.tools is None:
            computed = True
        else:
            code_tools += c.tools
    where = ", ".join(f"{c.path}:{c.line}" for c in calls)
    tools: tuple[str, ...] | None = (*(y.tools or ()), *code_tools)
    if computed or (y.tools is None and y.tools_set):
        tools = None
    return replace(
        y,
        builtin="; ".join(p for p in (y.builtin, f"is built at {where}") if p),
        model=y.model or next((c.model for c in calls if c.model), None),
        model_expr=y.model_expr or next((c.model_expr for c in calls if c.model_expr), ""),
        tools=tools,
        tools_expr=y.tools_expr or next((c.tools_expr for c in calls if c.tools_expr), ""),
        tools_set=y.tools_set or any(c.tools_set for c in calls),
        tool_defs=(*y.tool_defs, *(t for c in calls for t in c.tool_defs)),
    )
