"""Model fallbacks that agent frameworks take as an option: agno's ``fallback_models=``,
LangChain's ``.with_fallbacks(...)``, pydantic-ai's ``FallbackModel``, LiteLLM's
``fallbacks=`` (``Router``, ``completion``). Each answers with another model when the
primary fails, and nothing tells the caller. Facts only."""

from __future__ import annotations

import ast

from agentguard.inspect.project.model import FallbackSite
from agentguard.inspect.project.python_eval import Evaluator
from agentguard.inspect.project.python_import_needles import may_import, spelled_in_code
from agentguard.inspect.project.python_scope import ModuleIndex, short


def _kw(node: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in node.keywords if k.arg == name), None)


def _models(value: object) -> tuple[str, ...]:
    items = value if isinstance(value, tuple) else (value,)
    return tuple(v for v in items if isinstance(v, str))


def _site(
    path: str, node: ast.Call, detail: str, models: tuple[str, ...] = (), callee: str = ""
) -> FallbackSite:
    return FallbackSite(
        kind="framework-option",
        path=path,
        line=node.lineno,
        detail=detail,
        models=models,
        witnessed=False,
        certain=True,
        callee=callee,
    )


_FRAMEWORKS = ("agno", "pydantic_ai", "litellm")
_FRAMEWORK_NEEDLES = tuple(m.encode() for m in _FRAMEWORKS)
_OPTION_NEEDLES = (b"fallbacks", b"FallbackModel", b"fallback_models")


def may_take_fallbacks(data: bytes) -> bool:
    """False only when :func:`option_fallbacks` cannot find anything in the file (the
    second-stage pre-filter): it needs `.with_fallbacks(`, or an import of one of the
    frameworks and a keyword or class named for fallbacks."""
    # (each a callee's last name or a keyword: a docstring's `FallbackModel(...)` is none)
    if spelled_in_code(data, (b"with_fallbacks",)):
        return True
    return (
        (b"fallbacks" in data or b"FallbackModel" in data or b"fallback_models" in data)
        and may_import(data, _FRAMEWORK_NEEDLES)
        and spelled_in_code(data, _OPTION_NEEDLES)
    )


def option_fallbacks(path: str, index: ModuleIndex, ev: Evaluator) -> list[FallbackSite]:
    out: list[FallbackSite] = []
    # (callees below resolve to an import of one of these frameworks)
    imported = bool(index.import_roots & set(_FRAMEWORKS))
    for node, scope in index.calls:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "with_fallbacks":
            out.append(
                _site(
                    path, node, f"LangChain `{short(node, 60)}` answers with the fallback runnables"
                )
            )
            continue
        if not imported:
            continue
        q = ev.qualname(func, scope)
        if q is None:
            continue
        top, last = q.split(".")[0], q.split(".")[-1]
        if top == "agno" and (arg := _kw(node, "fallback_models")) is not None:
            models = _models(ev.eval(arg, scope))
            out.append(
                _site(path, node, f"agno {last}(fallback_models={short(arg, 50)})", models, q)
            )
        elif top == "pydantic_ai" and last == "FallbackModel":
            models = tuple(m for a in node.args for m in _models(ev.eval(a, scope)))
            out.append(_site(path, node, f"pydantic-ai `{short(node, 60)}`", models, q))
        elif top == "litellm" and (arg := _kw(node, "fallbacks")) is not None:
            out.append(_site(path, node, f"LiteLLM {last}(fallbacks={short(arg, 50)})", (), q))
    return out
