"""Tools an agent gets from another file of the project (facts for the map only).

Two ways, each read in its own file and joined here, after every file is read:

- ``@agent.tool`` / ``@agent.tool_plain`` where ``agent`` is imported from another module
  (``from .agent import agent``): the decorated function is a
  :class:`~agentguard.facts.agents.ToolDecoration` of its file; it joins the definition
  that module binds that name to (``agent = Agent(...)``, :attr:`AgentDefinition.bound_to`);
- a tools list naming an imported function (``Agent(tools=[search])``, ``from .tools
  import search``): :attr:`AgentDefinition.tool_imports`; the module is read and the
  ``def`` it binds is the tool, with what its own body is seen to call.

Imports are resolved as the project's other readers resolve them
(:func:`~.python_imports.candidate_files`: relative to the importer, or below the
project's root, ``src/`` or a folder above the importer), through re-exports (a package's
``__init__.py`` importing the name from its own module) up to :data:`MAX_HOPS`. Every
file the import may name is kept: a name two files define joins both, never the first;
one that resolves to nothing is not attached (the definition's own row still says its
tools as written). Only the files an import names are parsed, once each.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Sequence

from agentguard.facts.agents import AgentDefinition, ToolDecoration, ToolDef
from agentguard.inspect.project.python_eval import Evaluator, reaching
from agentguard.inspect.project.python_imports import ImportResolver, Loader, candidate_files
from agentguard.inspect.project.python_scope import Imported, ModuleIndex, Scope
from agentguard.inspect.project.python_tool_defs import (
    AGENT_METHODS,
    MAX_TOOLS,
    Def,
    function_defs,
    tool_def,
)
from agentguard.inspect.project.python_tool_needle import (
    may_decorate_elsewhere as may_decorate_elsewhere,
)

MAX_HOPS = 4  # re-exports followed (a package's __init__ importing from its module)
MAX_ORIGINS = 4  # files one import may name (more: not attached)


def tool_decorations(path: str, index: ModuleIndex, ev: Evaluator) -> list[ToolDecoration]:
    """Each function decorated ``@X.tool``/``@X.tool_plain`` where ``X`` is bound, on every
    reading, by an import."""
    out: list[ToolDecoration] = []
    for node, scope in function_defs(index):
        for d in node.decorator_list:
            target = d.func if isinstance(d, ast.Call) else d
            if not (
                isinstance(target, ast.Attribute)
                and target.attr in AGENT_METHODS
                and isinstance(target.value, ast.Name)
            ):
                continue
            owners = _imported(target.value.id, scope, node.lineno)
            if owners:
                via = f"@{target.value.id}.{target.attr}"
                out.append(
                    ToolDecoration(path, owners, tool_def(path, node, via, scope, index, ev))
                )
                if len(out) >= MAX_TOOLS:
                    return out
    return out


def imported_tool(elt: ast.expr, scope: Scope) -> tuple[tuple[str, str], ...]:
    """(name, qualified origin) for a tools-list element bound, on every reading, by an
    import; empty otherwise."""
    if not isinstance(elt, ast.Name):
        return ()
    return tuple((elt.id, q) for q in _imported(elt.id, scope, elt.lineno))


def _imported(name: str, scope: Scope, line: int) -> tuple[str, ...]:
    owner, bindings = reaching(name, scope, line)
    if owner is None or not bindings or not all(isinstance(b.value, Imported) for b in bindings):
        return ()
    return tuple(sorted({b.value.qualname for b in bindings if isinstance(b.value, Imported)}))


def bound_names(index: ModuleIndex, at_call: dict[int, int]) -> dict[int, tuple[str, ...]]:
    """Definition (by its place in the file's list) -> the module-level names bound to its
    call on every reading (``agent = Agent(...)``)."""
    out: dict[int, list[str]] = {}
    for name, bindings in index.module.bindings.items():
        if bindings and all(id(b.value) in at_call for b in bindings):
            for b in bindings:
                out.setdefault(at_call[id(b.value)], []).append(name)
    return {i: tuple(names) for i, names in out.items()}


class _Origins:
    """Where an imported name is finally defined: (file, name) pairs, every candidate."""

    def __init__(self, load: Loader, defined: set[tuple[str, str]]) -> None:
        self.resolver = ImportResolver(load)
        self.defined = defined  # (file, name) a definition is bound to: no parse needed
        self.exists: dict[str, bool] = {}

    def _exists(self, path: str) -> bool:
        if path not in self.exists:
            self.exists[path] = self.resolver.load(path) is not None
        return self.exists[path]

    def of(self, importer: str, qualname: str, hops: int = 0) -> list[tuple[str, str]]:
        rest = qualname.lstrip(".")
        if rest != qualname and "." not in rest:
            # `from . import agent` is recorded as "..agent": the name in this package
            qualname = qualname[1:]
        found = candidate_files(importer, qualname)
        if found is None or hops > MAX_HOPS:
            return []
        paths, name = found
        out: list[tuple[str, str]] = []
        for path in dict.fromkeys(paths):
            if (path, name) in self.defined:
                out.append((path, name))
                continue
            if not self._exists(path):
                continue
            module = self.resolver.module(path)
            if module is None:
                continue
            owner, bindings = reaching(name, module[0].module, 1 << 30)
            if owner is None or not bindings:
                continue
            for b in bindings:
                if isinstance(b.value, Imported):  # a re-export: follow it
                    out += self.of(path, b.value.qualname, hops + 1)
                else:
                    out.append((path, name))
        return list(dict.fromkeys(out))[: MAX_ORIGINS + 1]

    def function(self, path: str, name: str) -> tuple[Def, Scope, ModuleIndex, Evaluator] | None:
        """The ``def`` ``name`` is bound to at the module level of ``path`` (None: it is
        bound to something else, or to more than one thing)."""
        module = self.resolver.module(path)
        if module is None:
            return None
        index, ev = module
        bindings = index.module.bindings.get(name, [])
        if len(bindings) != 1 or bindings[0].node is None:
            return None
        return bindings[0].node, index.module, index, ev


def join_imported_tools(
    definitions: Sequence[AgentDefinition],
    decorations: Sequence[ToolDecoration],
    load: Loader,
) -> list[AgentDefinition]:
    """The definitions with the tools other files give them (see the module's text)."""
    wanted = decorations or any(d.tool_imports for d in definitions)
    if not wanted:
        return list(definitions)
    by_origin: dict[tuple[str, str], list[int]] = {}
    for i, d in enumerate(definitions):
        for name in d.bound_to:
            by_origin.setdefault((d.path, name), []).append(i)
    origins = _Origins(load, set(by_origin))
    added: dict[int, list[ToolDef]] = {}
    for dec in decorations:
        found = [o for q in dec.owners for o in origins.of(dec.path, q)]
        if len(found) > MAX_ORIGINS:
            continue
        for i in dict.fromkeys(i for o in found for i in by_origin.get(o, ())):
            if definitions[i].framework == "pydantic-ai":
                added.setdefault(i, []).append(dec.tool)
    for i, d in enumerate(definitions):
        for _name, qualname in d.tool_imports:
            found = origins.of(d.path, qualname)
            fns = [(p, f) for p, n in found[:MAX_ORIGINS] if (f := origins.function(p, n))]
            for path, (node, scope, index, ev) in fns:
                tool = tool_def(path, node, None, scope, index, ev)
                note = "imported" if len(fns) == 1 else f"imported; one of {len(fns)} files"
                added.setdefault(i, []).append(
                    dataclasses.replace(tool, via=f"{tool.via} ({note})")
                )
    out = list(definitions)
    for i, tools in added.items():
        d = out[i]
        have = set(d.tool_defs)
        kept = (*d.tool_defs, *(t for t in dict.fromkeys(tools) if t not in have))[:MAX_TOOLS]
        out[i] = dataclasses.replace(d, tool_defs=kept)
    return out
