"""Names imported from the project's own modules (``from .config import TOOLS``).

The per-file reader leaves an imported name as ``Unknown(qualname, "imported from another
module")``. Here, when the module is a file of the same project, that file is read and
the name is evaluated at its module level (the value it has once the module is
imported); anything else stays unknown. Only configurations that hold such a value cause
a read, so the pre-filter's savings are kept.
"""

from __future__ import annotations

import ast
import dataclasses
import posixpath
import warnings
from collections.abc import Callable
from typing import Any

from agentguard.inspect.project.mcp_mapping import mcp_server_from_mapping
from agentguard.inspect.project.model import AgentConfig, McpServer, OneOf, Option, Unknown
from agentguard.inspect.project.python_eval import Evaluator, plain, reaching
from agentguard.inspect.project.python_scope import ModuleIndex

IMPORTED = "imported from another module"
# the end of the ``declared_in`` of a server only an import made visible: its path and line
# are where the name is used (a rewrite never edits that line as its definition)
IMPORTED_DECLARATION = " (imported)"
MAX_HOPS = 4

Loader = Callable[[str], bytes | None]  # project-relative path -> bytes, or None


def candidate_files(importer: str, qualname: str) -> tuple[list[str], str] | None:
    """Files that may hold the module of ``qualname``, and the name inside it."""
    level = len(qualname) - len(qualname.lstrip("."))
    parts = qualname.lstrip(".").split(".")
    if len(parts) < 2 and level == 0:
        return None
    name, module = parts[-1], parts[:-1]
    if level:
        base = posixpath.dirname(importer)
        for _ in range(level - 1):
            if not base:
                return None  # above the project's top: not a file of this project
            base = posixpath.dirname(base)
        roots = [base]
    else:
        roots = ["", "src"]
        top = posixpath.dirname(importer)
        while top:
            roots.append(top)
            top = posixpath.dirname(top)
    rel = "/".join(module)
    out: list[str] = []
    for root in roots:
        stem = posixpath.join(root, rel) if rel else root
        if not stem:
            continue
        out += [f"{stem}.py", f"{stem}/__init__.py"]
    return out, name


class ImportResolver:
    def __init__(self, load: Loader) -> None:
        self.load = load
        self.modules: dict[str, tuple[ModuleIndex, Evaluator] | None] = {}
        # a file that was read but could not be parsed -> why (the caller says so)
        self.unparsed: dict[str, str] = {}

    def module(self, path: str) -> tuple[ModuleIndex, Evaluator] | None:
        """The parsed module of a project file (None: not there, or not Python, and then
        :attr:`unparsed` says why); each file is read and parsed once."""
        if path not in self.modules:
            data = self.load(path)
            parsed: tuple[ModuleIndex, Evaluator] | None = None
            if data is not None:
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        tree = ast.parse(data, filename=path)
                    index = ModuleIndex(tree)
                    parsed = (index, Evaluator(index, lambda _q: False))
                except SyntaxError as exc:  # the value stays unknown
                    where = f" at line {exc.lineno}" if exc.lineno else ""
                    self.unparsed[path] = f"Python syntax error{where}: {exc.msg}"
                except (ValueError, RecursionError) as exc:
                    self.unparsed[path] = (
                        "nested too deeply to read"
                        if isinstance(exc, RecursionError)
                        else f"not Python source: {exc}"
                    )
            self.modules[path] = parsed
        return self.modules[path]

    def value(self, importer: str, unknown: Unknown, hops: int = 0) -> Any:
        found = candidate_files(importer, unknown.expr)
        if found is None or hops >= MAX_HOPS:
            return unknown
        paths, name = found
        for path in paths:
            module = self.module(path)
            if module is None:
                continue
            index, ev = module
            owner, bindings = reaching(name, index.module, 1 << 30)
            if owner is None or not bindings:
                return Unknown(unknown.expr, f"not defined in {path}")
            value = ev.eval(ast.Name(id=name, ctx=ast.Load(), lineno=1 << 30), index.module)
            return self.resolve(path, plain(value), hops + 1)
        return unknown

    def resolve(self, importer: str, value: Any, hops: int = 0) -> Any:
        if isinstance(value, Unknown) and value.reason == IMPORTED:
            return self.value(importer, value, hops)
        if isinstance(value, tuple):
            return tuple(self.resolve(importer, v, hops) for v in value)
        if isinstance(value, dict):
            return {k: self.resolve(importer, v, hops) for k, v in value.items()}
        if isinstance(value, OneOf):
            return OneOf(tuple(self.resolve(importer, v, hops) for v in value.alternatives))
        return value


def _mentions_import(value: Any) -> bool:
    if isinstance(value, Unknown):
        return value.reason == IMPORTED
    if isinstance(value, tuple):
        return any(_mentions_import(v) for v in value)
    if isinstance(value, dict):
        return any(_mentions_import(v) for v in value.values())
    if isinstance(value, OneOf):
        return any(_mentions_import(v) for v in value.alternatives)
    return False


def resolve_configs(
    configs: list[AgentConfig], load: Loader
) -> tuple[list[AgentConfig], list[McpServer]]:
    """The configurations with project-local imported values filled in where possible, and
    the MCP servers that only became visible that way (``mcp_servers=SERVERS`` imported)."""
    resolver = ImportResolver(load)
    out: list[AgentConfig] = []
    servers: list[McpServer] = []
    for cfg in configs:
        if cfg.engine.endswith("(TypeScript)") or cfg.engine == "claude CLI":
            out.append(cfg)
            continue
        changed = {
            k: Option(resolver.resolve(cfg.path, o.value), o.line, o.expr)
            for k, o in cfg.options.items()
            if _mentions_import(o.value)
        }
        out.append(dataclasses.replace(cfg, options={**cfg.options, **changed}) if changed else cfg)
        table = changed.get("mcp_servers")
        if table is not None and isinstance(table.value, dict):
            for name, spec in table.value.items():
                if isinstance(spec, dict):
                    servers.append(
                        mcp_server_from_mapping(
                            name,
                            spec,
                            path=cfg.path,
                            line=table.line,
                            declared_in=f"mcp_servers={table.expr}{IMPORTED_DECLARATION}",
                        )
                    )
    return out, servers
