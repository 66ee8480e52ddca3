"""crewAI's ``@CrewBase`` classes: where their agents' YAML is, and their ``@tool``
methods (facts for the map only; the YAML itself is read by :mod:`.crew_yaml`).

A class is one when a decorator resolves, through the file's imports, to
``crewai.project.CrewBase``; its ``agents_config`` class attribute, when a string
literal, names the YAML relative to the class's file (crewAI's default when unset:
``config/agents.yaml``); any other value is computed (None: not read).
"""

from __future__ import annotations

import ast

from agentguard.facts.agents import CrewClass
from agentguard.inspect.project.python_eval import Evaluator
from agentguard.inspect.project.python_scope import ModuleIndex

CREW_BASES = frozenset({"crewai.project.CrewBase", "crewai.project.crew_base.CrewBase"})
TOOL_METHODS = frozenset({"crewai.project.tool", "crewai.project.annotations.tool"})
DEFAULT_CONFIG = "config/agents.yaml"
MAX_CLASSES = 20


def _names(node: ast.expr, index: ModuleIndex, ev: Evaluator) -> tuple[str, ...]:
    target = node.func if isinstance(node, ast.Call) else node
    return ev.qualnames(target, index.module)


def crew_classes(path: str, tree: ast.Module, index: ModuleIndex, ev: Evaluator) -> list[CrewClass]:
    """The module's own ``@CrewBase`` classes (top level: where crewAI's projects put them)."""
    out: list[CrewClass] = []
    for node in tree.body:
        if not isinstance(node, ast.ClassDef) or len(out) >= MAX_CLASSES:
            continue
        if not any(set(_names(d, index, ev)) & CREW_BASES for d in node.decorator_list):
            continue
        config: str | None = DEFAULT_CONFIG
        tools: list[tuple[str, int]] = []
        for stmt in node.body:
            value = _agents_config(stmt)
            if value is not None:
                literal = isinstance(value, ast.Constant) and isinstance(value.value, str)
                config = str(value.value) if isinstance(value, ast.Constant) and literal else None
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef) and any(
                set(_names(d, index, ev)) & TOOL_METHODS for d in stmt.decorator_list
            ):
                tools.append((stmt.name, stmt.lineno))
        out.append(CrewClass(path, node.lineno, node.name, config, tuple(tools)))
    return out


def _agents_config(stmt: ast.stmt) -> ast.expr | None:
    """The value of an ``agents_config = ...`` (or annotated) class attribute."""
    if isinstance(stmt, ast.Assign) and any(
        isinstance(t, ast.Name) and t.id == "agents_config" for t in stmt.targets
    ):
        return stmt.value
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
        return stmt.value if stmt.target.id == "agents_config" else None
    return None


def config_key(value: ast.expr) -> str | None:
    """``"researcher"`` of ``config=self.agents_config["researcher"]``, else None."""
    if (
        isinstance(value, ast.Subscript)
        and isinstance(value.value, ast.Attribute)
        and value.value.attr == "agents_config"
        and isinstance(value.value.value, ast.Name)
        and value.value.value.id == "self"
        and isinstance(value.slice, ast.Constant)
        and isinstance(value.slice.value, str)
    ):
        return value.slice.value
    return None
