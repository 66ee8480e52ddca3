"""What the primary and the fallback path of an ``except`` fallback are built with: the
tools and the system prompt of each model call or options object in the ``try`` body and
in the handler (AG321). Conservative: a value the text does not show is unknown, and two
paths are compared only through the same callee (``ClaudeAgentOptions(...)`` on both
sides, ``client.messages.create(...)`` on both sides), so a fallback that reuses an agent
built elsewhere is never read as "built without tools"."""

from __future__ import annotations

import ast
from typing import Any

from agentguard.inspect.project.model import PathBuild, Unknown
from agentguard.inspect.project.python_eval import Evaluator
from agentguard.inspect.project.python_scope import Scope, short

TOOL_KEYS = ("tools", "allowed_tools", "toolsets", "functions", "mcp_servers")
PROMPT_KEYS = ("system_prompt", "instructions", "system", "system_message")
MODEL_KEYS = ("model", "model_name")


def _name_of(elt: ast.expr) -> str:
    """A tool as the text names it: a string, a ``{"name": ...}`` spec's name, or its text."""
    if isinstance(elt, ast.Constant) and isinstance(elt.value, str):
        return elt.value
    if isinstance(elt, ast.Dict):
        for k, v in zip(elt.keys, elt.values, strict=True):
            if isinstance(k, ast.Constant) and k.value == "name" and isinstance(v, ast.Constant):
                return str(v.value)
    return short(elt, 60)


def _element(x: object) -> str | None:
    if isinstance(x, str):
        return x
    if isinstance(x, Unknown):
        return x.expr
    if isinstance(x, dict) and isinstance(x.get("name"), str):
        return str(x["name"])
    return None


def _tools(node: ast.expr, scope: Scope, ev: Evaluator) -> tuple[str, ...] | Unknown:
    value = node
    if isinstance(value, ast.List | ast.Tuple | ast.Set):
        out: list[str] = []
        for elt in value.elts:
            if isinstance(elt, ast.Starred):
                return Unknown(short(node, 60), "a spread list of tools")
            out.append(_name_of(elt))
        return tuple(out)
    if isinstance(value, ast.Dict):  # mcp_servers={"tasks": tasks}
        keys = [
            k.value if isinstance(k, ast.Constant) and isinstance(k.value, str) else None
            for k in value.keys
        ]
        if all(isinstance(k, str) for k in keys):
            return tuple(str(k) for k in keys)
        return Unknown(short(node, 60), "keys not known from the text")
    got = ev.eval(node, scope)  # a name bound to a list: each element as the text names it
    names = [_element(x) for x in got] if isinstance(got, list | tuple) else [None]
    if all(n is not None for n in names):
        return tuple(str(n) for n in names)
    return Unknown(short(node, 60), "not a list the text shows")


def _prompt(node: ast.expr, scope: Scope, ev: Evaluator) -> str | Unknown:
    got = ev.eval(node, scope)
    return got if isinstance(got, str) else Unknown(short(node, 60), "not a string the text shows")


def builds(nodes: list[ast.AST], scope: Scope, ev: Evaluator) -> list[PathBuild]:
    """Each call of a block that asks for a model and sets tools or a prompt (or whose
    callee does so on the other path: the pairing is the rule's)."""
    out: list[PathBuild] = []
    for n in nodes:
        if not isinstance(n, ast.Call):
            continue
        keys = {kw.arg: kw.value for kw in n.keywords if kw.arg}
        if not any(k in keys for k in (*MODEL_KEYS, *TOOL_KEYS, *PROMPT_KEYS)):
            continue
        tools_key = next((k for k in TOOL_KEYS if k in keys), None)
        prompt_key = next((k for k in PROMPT_KEYS if k in keys), None)
        model: Any = next((ev.eval(keys[k], scope) for k in MODEL_KEYS if k in keys), None)
        spread = any(kw.arg is None for kw in n.keywords)  # **kwargs may set anything
        tools: tuple[str, ...] | Unknown | None = None
        if tools_key is not None:
            tools = _tools(keys[tools_key], scope, ev)
        elif spread:
            tools = Unknown("**kwargs", "may set the tools")
        prompt: str | Unknown | None = None
        if prompt_key is not None:
            prompt = _prompt(keys[prompt_key], scope, ev)
        elif spread:
            prompt = Unknown("**kwargs", "may set the prompt")
        out.append(
            PathBuild(
                callee=short(n.func, 60),
                line=n.lineno,
                model=model if isinstance(model, str) else None,
                tools_key=tools_key,
                tools=tools,
                prompt=prompt,
            )
        )
    return out
