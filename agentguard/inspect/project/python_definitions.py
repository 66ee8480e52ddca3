"""Agents the common frameworks define, whatever their tools (facts for the map only).

A constructor call whose callee resolves, through the file's imports, to a known agent
class or factory (``pydantic_ai.Agent``, ``agents.Agent``, ``browser_use.Agent``,
``crewai.Agent``/``Crew``, ``create_react_agent``, ``StateGraph(...).compile()``,
AutoGen's and smolagents' agents, ``aider.coders.Coder.create``) is one
:class:`AgentDefinition`: where, the model when written as a literal, and the tools as
written (None when the list is computed). Callees are matched through the imports, never
by bare name; nothing here judges: the risky tools are :mod:`python_frameworks`' grants.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, replace

from agentguard.facts.agents import ToolDef
from agentguard.inspect.project.model import AgentDefinition
from agentguard.inspect.project.python_crews import config_key
from agentguard.inspect.project.python_eval import Evaluator, reaching
from agentguard.inspect.project.python_import_needles import in_code, may_import
from agentguard.inspect.project.python_scope import ModuleIndex, Scope, short
from agentguard.inspect.project.python_tool_defs import (
    decorated_onto,
    function_defs,
    keep_tools,
    named_tool,
    tool_def,
)
from agentguard.inspect.project.python_tool_imports import bound_names, imported_tool


@dataclass(frozen=True)
class _Kind:
    framework: str
    model: tuple[str, int | None] | None  # (keyword, position) of the model argument
    tools: tuple[str, int | None] | None  # (keyword, position); None: the class takes none
    builtin: str = ""


_PYDANTIC = _Kind("pydantic-ai", ("model", 0), ("tools", None))
_OPENAI = _Kind("openai-agents", ("model", None), ("tools", None))
_BROWSER = _Kind(
    "browser-use",
    ("llm", None),
    ("tools", None),
    "drives a web browser by itself (its own actions open pages, click and type)",
)
_CREW_AGENT = _Kind("crewai", ("llm", None), ("tools", None))
_CREW = _Kind("crewai", ("manager_llm", None), None, "runs the agents it is given")
_REACT = _Kind("langgraph", ("model", 0), ("tools", 1))
_LANGCHAIN = _Kind("langchain", ("model", 0), ("tools", 1))
_AUTOGEN = _Kind("autogen", ("model_client", 1), ("tools", None))
_AUTOGEN2 = _Kind("autogen", ("llm_config", None), None)
_SMOL = _Kind("smolagents", ("model", 1), ("tools", 0))
_SMOL_CODE = _Kind(
    "smolagents", ("model", 1), ("tools", 0), "writes Python and runs it in its executor"
)
_AIDER = _Kind(
    "aider",
    ("main_model", None),
    None,
    "edits the files it is handed, and runs the shell commands it suggests once confirmed",
)
_GRAPH = _Kind("langgraph", None, None, "runs the nodes of its graph")

# qualified callee -> what it defines; a class's other public paths are listed as well
CLASSES: dict[str, _Kind] = {
    "pydantic_ai.Agent": _PYDANTIC,
    "pydantic_ai.agent.Agent": _PYDANTIC,
    "agents.Agent": _OPENAI,
    "agents.agent.Agent": _OPENAI,
    "browser_use.Agent": _BROWSER,
    "browser_use.agent.service.Agent": _BROWSER,
    "browser_use.beta.Agent": _BROWSER,
    "browser_use.beta.service.Agent": _BROWSER,
    "crewai.Agent": _CREW_AGENT,
    "crewai.agent.Agent": _CREW_AGENT,
    "crewai.Crew": _CREW,
    "crewai.crew.Crew": _CREW,
    "langgraph.prebuilt.create_react_agent": _REACT,
    "langgraph.prebuilt.chat_agent_executor.create_react_agent": _REACT,
    "langchain.agents.create_agent": _LANGCHAIN,
    "autogen_agentchat.agents.AssistantAgent": _AUTOGEN,
    "autogen.AssistantAgent": _AUTOGEN2,
    "autogen.ConversableAgent": _AUTOGEN2,
    "smolagents.ToolCallingAgent": _SMOL,
    "smolagents.CodeAgent": _SMOL_CODE,
    "aider.coders.Coder.create": _AIDER,
}
GRAPHS = frozenset({"langgraph.graph.StateGraph", "langgraph.graph.state.StateGraph"})

# What the file must spell for a definition to be found (the second-stage pre-filter): a
# framework's module, as its imports name it, and a callee's last name where the readers
# can resolve it: called (`Agent(`, `Coder.create(`), imported under an alias (`Agent as
# A`) or bound to a name (`A = crewai.Agent`); for a graph, its class and a `compile`.
# Most of a framework's own files name its classes only in imports, annotations and
# docstrings: those are not parsed for this.
MODULE_NEEDLES = tuple(sorted({q.split(".")[0].encode() for q in (*CLASSES, *GRAPHS)}))
NAME_NEEDLES = (b"Agent", b"Crew", b"create_react_agent", b"create_agent", b"Coder")
# each opens with its literal (a pattern that opens with an alternation is tried at every
# byte: three times the cost on a framework's own tree)
_USED = tuple(
    re.compile(p, re.MULTILINE)
    for p in (
        *(n + rb"\s*(?:\(|as\b)" for n in NAME_NEEDLES if n != b"Coder"),
        rb"Coder\s*(?:\.\s*create\s*\(|as\b)",
        rb"Agent\s*\[[^\]\n]*\]\s*\(",  # `Agent[Deps, Output](...)`
        rb"=\s*\(?\s*[\w.]*(?:Agent|Crew|create_react_agent|create_agent|Coder(?:\.create)?)"
        rb"\s*(?:[;#)\\]|$)",
    )
)


def may_define(data: bytes) -> bool:
    if not may_import(data, MODULE_NEEDLES):  # (agent_definitions reads the roots alone)
        return False
    if b"StateGraph" in data and b"compile" in data:
        return True
    # (a use in code: not one in a docstring's example, where most of a framework's own
    # modules write `agent = Agent(...)`; each pattern starts with the name or its `=`)
    return any(n in data for n in NAME_NEEDLES) and any(
        in_code(data, m.start()) for u in _USED for m in u.finditer(data)
    )


def _arg(node: ast.Call, where: tuple[str, int | None] | None) -> ast.expr | None:
    if where is None:
        return None
    key, pos = where
    for kw in node.keywords:
        if kw.arg == key:
            return kw.value
    if (
        pos is not None
        and pos < len(node.args)
        and not any(isinstance(a, ast.Starred) for a in node.args[: pos + 1])
    ):
        return node.args[pos]
    return None


_MODEL_KEYS = ("model", "model_id", "model_name")


def _model(arg: ast.expr, scope: Scope, ev: Evaluator) -> str | None:
    """The model when the text gives it as a literal: the argument itself, a client built
    in place with a literal ``model=`` (``ChatOpenAI(model="gpt-4o")``), or a dict's."""
    value = ev.eval(arg, scope)
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("model"), str):
        return str(value["model"])
    if isinstance(arg, ast.Call):
        for kw in arg.keywords:
            if kw.arg in _MODEL_KEYS:
                inner = ev.eval(kw.value, scope)
                return inner if isinstance(inner, str) else None
        if arg.args and isinstance(arg.args[0], ast.Constant):
            first = arg.args[0].value
            return first if isinstance(first, str) else None
    return None


def _tools(arg: ast.expr | None) -> tuple[tuple[str, ...] | None, bool]:
    """(each tool as written, or None when computed; whether the call hands tools)."""
    if arg is None:
        return (), False
    if isinstance(arg, ast.List | ast.Tuple) and not any(
        isinstance(e, ast.Starred) for e in arg.elts
    ):
        return tuple(short(e, 60) for e in arg.elts), True
    return None, True


def agent_definitions(path: str, index: ModuleIndex, ev: Evaluator) -> list[AgentDefinition]:
    roots = {q.split(".")[0] for q in (*CLASSES, *GRAPHS)}
    if not index.import_roots & roots:
        return []  # every callee matched below resolves to an import of a framework
    out: list[AgentDefinition] = []
    at_call: dict[int, int] = {}  # id(the constructor call) -> its definition in ``out``
    for node, scope in index.calls:
        # (`Agent[Deps, Output](...)`: the class subscripted with its type parameters)
        func = node.func.value if isinstance(node.func, ast.Subscript) else node.func
        names = [q for q in ev.qualnames(func, scope) if q in CLASSES]
        if names:
            at_call[id(node)] = len(out)
            out.append(_definition(path, node, scope, index, ev, names[0]))
        elif _compiles_a_graph(node, scope, ev):
            out.append(
                AgentDefinition(
                    _GRAPH.framework,
                    "langgraph.graph.StateGraph",
                    "StateGraph(...).compile()",
                    path,
                    node.lineno,
                    tools=None,
                    builtin=_GRAPH.builtin,
                )
            )
    if at_call:
        _decorated_tools(path, index, ev, out, at_call)
        for i, bound in bound_names(index, at_call).items():
            out[i] = replace(out[i], bound_to=bound)
    return out


def _decorated_tools(
    path: str,
    index: ModuleIndex,
    ev: Evaluator,
    out: list[AgentDefinition],
    at_call: dict[int, int],
) -> None:
    """Attach each ``@agent.tool``/``@agent.tool_plain`` function to the definition its
    agent name is bound to (each of them when the name has several readings)."""
    added: dict[int, list[ToolDef]] = {}
    for node, scope in function_defs(index):
        for call, via in decorated_onto(node, scope):
            i = at_call.get(id(call))
            if i is not None and out[i].framework == "pydantic-ai":
                added.setdefault(i, []).append(tool_def(path, node, via, scope, index, ev))
    for i, tools in added.items():
        d = out[i]
        tools.sort(key=lambda t: t.line)
        kept, cut = keep_tools((*d.tool_defs, *tools))
        out[i] = replace(d, tool_defs=kept, tools_cut=d.tools_cut + cut)


def _definition(
    path: str, node: ast.Call, scope: Scope, index: ModuleIndex, ev: Evaluator, q: str
) -> AgentDefinition:
    kind = CLASSES[q]
    model_arg = _arg(node, kind.model)
    tools_arg = _arg(node, kind.tools)
    tools, tools_set = _tools(tools_arg) if kind.tools is not None else (None, False)
    listed: list[ToolDef] = []
    imported: list[tuple[str, str]] = []  # (joined to their files after every file is read)
    if isinstance(tools_arg, ast.List | ast.Tuple):
        for elt in tools_arg.elts:
            for fn, bound_in in named_tool(elt, scope):
                listed.append(tool_def(path, fn, None, bound_in, index, ev))
            imported += imported_tool(elt, scope)
    kept, cut = keep_tools(listed)
    parts = q.split(".")
    label = f"{parts[-2]}.{parts[-1]}(...)" if parts[-1] == "create" else f"{parts[-1]}(...)"
    return AgentDefinition(
        kind.framework,
        q,
        label,
        path,
        node.lineno,
        model=None if model_arg is None else _model(model_arg, scope, ev),
        model_expr="" if model_arg is None else short(model_arg, 60),
        tools=tools,
        tools_expr="" if tools_arg is None else short(tools_arg, 60),
        tools_set=tools_set,
        builtin=kind.builtin,
        tool_defs=kept,
        tools_cut=cut,
        tool_imports=tuple(dict.fromkeys(imported)),
        config_key=next((config_key(k.value) for k in node.keywords if k.arg == "config"), None)
        if kind is _CREW_AGENT
        else None,
    )


def _compiles_a_graph(node: ast.Call, scope: Scope, ev: Evaluator) -> bool:
    """``builder.compile()`` where ``builder`` is a ``StateGraph(...)`` on every reading
    (or ``StateGraph(...).compile()`` in place)."""
    func = node.func
    if not (isinstance(func, ast.Attribute) and func.attr == "compile"):
        return False
    base = func.value
    if isinstance(base, ast.Call):
        return _is_graph(base, scope, ev)
    if not isinstance(base, ast.Name):
        return False
    owner, bindings = reaching(base.id, scope, base.lineno)
    return (
        owner is not None
        and bool(bindings)
        and all(isinstance(b.value, ast.Call) and _is_graph(b.value, owner, ev) for b in bindings)
    )


def _is_graph(call: ast.Call, scope: Scope, ev: Evaluator) -> bool:
    names = ev.qualnames(call.func, scope)
    return bool(names) and all(n in GRAPHS for n in names)
