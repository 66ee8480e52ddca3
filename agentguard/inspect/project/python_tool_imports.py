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
file the import may name is kept: a name two files define joins both, never the first,
and one bound to something other than a ``def`` there (a wrapped function) is a tool whose
body is not read, never left out beside a ``def`` of another file. One that resolves to
nothing is not attached (the definition's own row still says its tools as written). Only
the files an import names are parsed, once each; each (file, name) pair is looked up once
per import (a cycle ends, a fan-out costs its pairs), at most :data:`MAX_LOOKUPS`. What
could not be told is a failed source, never a map that says less without saying so: a
file the joins needed that does not parse, an import a cap stopped.
"""

from __future__ import annotations

import ast
import dataclasses
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

from agentguard.facts.agents import AgentDefinition, ToolDecoration, ToolDef
from agentguard.findings import Source
from agentguard.inspect.project.outcome import failed_source
from agentguard.inspect.project.python_eval import Evaluator, reaching
from agentguard.inspect.project.python_imports import ImportResolver, Loader, candidate_files
from agentguard.inspect.project.python_scope import Imported, ModuleIndex, Scope
from agentguard.inspect.project.python_tool_defs import (
    AGENT_METHODS,
    Def,
    function_defs,
    keep_tools,
    tool_def,
)
from agentguard.inspect.project.python_tool_needle import (
    may_decorate_elsewhere as may_decorate_elsewhere,
)

MAX_HOPS = 4  # re-exports followed (a package's __init__ importing from its module)
MAX_ORIGINS = 4  # files one import may name (more: not attached, a failed source)
MAX_LOOKUPS = 64  # (file, name) pairs one import may visit (more: a failed source)


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
    return out  # (a file's facts are capped as every file's: files.MAX_FACTS_PER_FILE)


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


@dataclass(frozen=True)
class _Found:
    """Where an imported name is finally defined: (file, name) pairs, every candidate;
    ``why``: why that list may miss one (a cap hit), None when it is whole."""

    origins: tuple[tuple[str, str], ...]
    why: str | None = None


class _Origins:
    """Where imported names are defined. Each (file, name) pair is looked up once per
    import, and each import once: re-exports that import from themselves, or fan out on
    every branch of an ``if``, cost their pairs, never their paths (a cycle ends)."""

    def __init__(self, load: Loader, defined: set[tuple[str, str]]) -> None:
        self.resolver = ImportResolver(load)
        self.defined = defined  # (file, name) a definition is bound to: no parse needed
        self.exists: dict[str, bool] = {}
        self.found: dict[tuple[str, str], _Found] = {}
        self.tools: dict[tuple[str, str, int], ToolDef] = {}

    def _exists(self, path: str) -> bool:
        if path not in self.exists:
            self.exists[path] = self.resolver.load(path) is not None
        return self.exists[path]

    def of(self, importer: str, qualname: str) -> _Found:
        if (importer, qualname) not in self.found:
            self.found[(importer, qualname)] = self._search(importer, qualname)
        return self.found[(importer, qualname)]

    def _search(self, importer: str, qualname: str) -> _Found:
        out: list[tuple[str, str]] = []
        why: list[str] = []
        todo: deque[tuple[str, str, int]] = deque([(importer, qualname, 0)])
        seen: set[tuple[str, str]] = set()
        while todo:
            at, q, hops = todo.popleft()
            if (at, q) in seen:
                continue
            seen.add((at, q))
            if len(seen) > MAX_LOOKUPS:
                why.append(f"more than {MAX_LOOKUPS} re-exports to follow")
                break
            rest = q.lstrip(".")
            if rest != q and "." not in rest:
                q = q[1:]  # `from . import agent` is recorded as "..agent": this package's
            found = candidate_files(at, q)
            if found is None:
                continue
            paths, name = found
            for path in dict.fromkeys(paths):
                if (path, name) in self.defined:
                    out.append((path, name))
                    continue
                if not self._exists(path):
                    continue
                module = self.resolver.module(path)
                if module is None:
                    continue  # (read but not parsed: the resolver keeps why, a failed source)
                owner, bindings = reaching(name, module[0].module, 1 << 30)
                for b in bindings if owner is not None else ():
                    if not isinstance(b.value, Imported):
                        out.append((path, name))
                    elif hops < MAX_HOPS:  # a re-export: follow it
                        todo.append((path, b.value.qualname, hops + 1))
                    else:
                        why.append(f"re-exported more than {MAX_HOPS} times")
        origins = tuple(dict.fromkeys(out))
        if len(origins) > MAX_ORIGINS:
            why.append(f"more than {MAX_ORIGINS} files may define it")
        return _Found(origins, "; ".join(dict.fromkeys(why)) or None)

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

    def tool(self, path: str, name: str, of: int) -> ToolDef:
        """The tool ``name`` as ``path`` defines it (``of``: the files the import may
        name): its ``def`` read, or (bound to something else: a wrapped function, a
        class, a value) a tool whose body is not read. Each is read once."""
        if (path, name, of) not in self.tools:
            note = "imported" if of == 1 else f"imported; one of {of} files"
            fn = self.function(path, name)
            if fn is None:
                line = self.line_of(path, name)
                self.tools[(path, name, of)] = ToolDef(
                    name, path, line, f"{name} = ... ({note})", body=False
                )
            else:
                node, scope, index, ev = fn
                tool = tool_def(path, node, None, scope, index, ev)
                self.tools[(path, name, of)] = dataclasses.replace(tool, via=f"{tool.via} ({note})")
        return self.tools[(path, name, of)]

    def line_of(self, path: str, name: str) -> int:
        """The line of the first module-level binding of ``name`` in ``path`` (1: none)."""
        module = self.resolver.module(path)
        bindings = module[0].module.bindings.get(name, []) if module is not None else []
        return bindings[0].line if bindings else 1

    def sources(self, why: list[tuple[str, str]]) -> list[Source]:
        """The files the joins needed and could not parse, and each join a cap stopped."""
        out = [
            failed_source(path, f"{reason} (read for the tools another file imports from it)",
                          "parse-error")
            for path, reason in sorted(self.resolver.unparsed.items())
        ]  # fmt: skip
        out += [failed_source(where, text, "cap-tool-imports") for where, text in why]
        return out


def join_imported_tools(
    definitions: Sequence[AgentDefinition],
    decorations: Sequence[ToolDecoration],
    load: Loader,
) -> tuple[list[AgentDefinition], list[Source]]:
    """The definitions with the tools other files give them (see the module's text), and
    the sources of what could not be told: a file the joins needed that does not parse (a
    failed source), an import a cap stopped (its tool is not drawn: a failed source too,
    never a map that says less without saying so)."""
    wanted = decorations or any(d.tool_imports for d in definitions)
    if not wanted:
        return list(definitions), []
    by_origin: dict[tuple[str, str], list[int]] = {}
    for i, d in enumerate(definitions):
        for name in d.bound_to:
            by_origin.setdefault((d.path, name), []).append(i)
    origins = _Origins(load, set(by_origin))
    added: dict[int, list[ToolDef]] = {}
    capped: list[tuple[str, str]] = []
    for dec in decorations:
        found = [o for q in dec.owners for o in origins.of(dec.path, q).origins]
        whys = [w for q in dec.owners if (w := origins.of(dec.path, q).why)]
        what = f"{dec.tool.via} {dec.tool.name}"
        too_many = len(dict.fromkeys(found)) > MAX_ORIGINS
        if too_many:
            whys.append(f"more than {MAX_ORIGINS} files may define it")
        if whys:
            told = (
                "it may be added to another agent too"
                if found and not too_many
                else "which agent it is added to could not be told, so it is not drawn"
            )
            capped.append((f"{dec.path}:{dec.tool.line}", f"{what}: {told} "
                           f"({'; '.join(dict.fromkeys(whys))})"))  # fmt: skip
        if too_many:
            continue
        for i in dict.fromkeys(i for o in found for i in by_origin.get(o, ())):
            if definitions[i].framework == "pydantic-ai":
                added.setdefault(i, []).append(dec.tool)
    for i, d in enumerate(definitions):
        for name, qualname in d.tool_imports:
            got = origins.of(d.path, qualname)
            if got.why:
                capped.append((f"{d.path}:{d.line}", f"tool {name}: where it is defined could "
                               f"not be told ({got.why})"))  # fmt: skip
            if len(got.origins) > MAX_ORIGINS:
                continue
            for path, n in got.origins:
                added.setdefault(i, []).append(origins.tool(path, n, len(got.origins)))
    out = list(definitions)
    for i, tools in added.items():
        d = out[i]
        have = set(d.tool_defs)
        kept, cut = keep_tools((*d.tool_defs, *(t for t in dict.fromkeys(tools) if t not in have)))
        out[i] = dataclasses.replace(d, tool_defs=kept, tools_cut=d.tools_cut + cut)
    return out, origins.sources(list(dict.fromkeys(capped)))
