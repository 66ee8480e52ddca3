"""Silent model fallbacks in Python: ``except`` handlers that switch model or client.

A handler counts as a fallback when its body (nested functions excluded) asks for a model
that differs from the ones the function already used (a ``model=`` keyword, or an argument
that names a model), assigns a model, client or llm to a name whose head word says it holds
one, or constructs an LLM client. It is *witnessed* when it re-raises or logs (a
``logging``/logger call, ``warnings.warn``, or a print to stderr). Only files that import an
LLM client library are examined.

What is not a switch, each a pattern read wrong in real code before (crewAI, autogen,
open_deep_research): a handler that catches only import errors (an optional-import guard
probes for a feature; it cannot hide a model's failure); a name whose head word is not the
holder (``model_class``, ``model_token_limit``, ``LITELLM_AVAILABLE``: something *about* a
model); a holder set to ``None`` or another non-string constant (a feature turned off); a
value built from the same object the ``try`` used (``llm.model_copy()`` after
``copy.copy(llm)``); the function's own parameter passed on unchanged (the caller's model,
not another one); a model named inside a condition (``if is_token_limit_exceeded(e,
model):`` inspects, it does not ask); a model-like string passed into a library that is not
an LLM client (``tiktoken.get_encoding("gpt2")`` names an encoding).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from typing import Any

from agentguard.inspect.project.model import FallbackSite, Unknown
from agentguard.inspect.project.python_eval import Evaluator, reaching
from agentguard.inspect.project.python_fallback_paths import builds
from agentguard.inspect.project.python_scope import Imported, ModuleIndex, Scope, short

LLM_MODULES = (
    "anthropic",
    "openai",
    "claude_agent_sdk",
    "claude_code_sdk",
    "litellm",
    "langchain",
    "google.genai",
    "google.generativeai",
    "mistralai",
    "cohere",
    "groq",
    "agents",
    "smolagents",
    "crewai",
    "autogen",
    "ollama",
    "vertexai",
    "boto3",
)
_CLIENT_NAMES = {
    "Anthropic",
    "AsyncAnthropic",
    "AnthropicBedrock",
    "AnthropicVertex",
    "OpenAI",
    "AsyncOpenAI",
    "AzureOpenAI",
    "AsyncAzureOpenAI",
    "ChatOpenAI",
    "ChatAnthropic",
    "ChatGoogleGenerativeAI",
    "ChatVertexAI",
    "ChatOllama",
    "ChatBedrock",
    "ClaudeSDKClient",
    "GenerativeModel",
}
_HOLDER_WORDS = ("model", "client", "llm")
_LOG_METHODS = {
    "debug",
    "info",
    "warning",
    "warn",
    "error",
    "exception",
    "critical",
    "log",
    "fatal",
}


def _imports_llm(index: ModuleIndex) -> bool:
    for bindings in index.module.bindings.values():
        for b in bindings:
            if isinstance(b.value, Imported) and b.value.qualname.startswith(LLM_MODULES):
                return True
    return False


def _body_nodes(stmts: list[ast.stmt]) -> Iterator[ast.AST]:
    stack: list[ast.AST] = list(reversed(stmts))
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(
                child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef
            ):
                continue
            stack.append(child)


_MODEL_PREFIXES = r"claude|gpt|o[1-9]|gemini|mistral|llama|command|sonar|deepseek"
_MODEL_ID = re.compile(rf"^({_MODEL_PREFIXES})[\w.:-]*$")
_IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError"}
_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


def head_word(name: str) -> str:
    """The last word of a snake_case or CamelCase name, lower-cased: what the name *is*
    (``backup_model`` is a model, ``model_class`` a class, ``LITELLM_AVAILABLE`` a flag)."""
    words = _WORD.findall(name)
    return words[-1].lower() if words else ""


def _holds_a_model(name: str) -> bool:
    return head_word(name) in _HOLDER_WORDS or head_word(name) in ("models", "clients", "llms")


def _names_a_model(arg: ast.AST) -> bool:
    """A positional argument that names a model: `BACKUP_MODEL`, `self.model`, "gpt-4o"."""
    if isinstance(arg, ast.Name):
        return head_word(arg.id) == "model"
    if isinstance(arg, ast.Attribute):
        return head_word(arg.attr) == "model"
    return (
        isinstance(arg, ast.Constant)
        and isinstance(arg.value, str)
        and bool(_MODEL_ID.match(arg.value))
    )


def _only_import_errors(handler: ast.ExceptHandler) -> bool:
    caught = handler.type
    names = caught.elts if isinstance(caught, ast.Tuple) else [caught] if caught else []
    if not names:
        return False
    for n in names:
        last = n.id if isinstance(n, ast.Name) else n.attr if isinstance(n, ast.Attribute) else ""
        if last not in _IMPORT_ERRORS:
            return False
    return True


def _condition_nodes(nodes: list[ast.AST]) -> set[int]:
    """Ids of the nodes inside a condition (an ``if``/``while`` test, an ``assert``, a
    conditional expression's test): what is named there is inspected, not asked for."""
    inside: set[int] = set()
    for n in nodes:
        if isinstance(n, ast.If | ast.While | ast.IfExp | ast.Assert):
            inside.update(id(c) for c in ast.walk(n.test))
    return inside


def _into_other_library(call: ast.Call, scope: Scope, ev: Evaluator) -> bool:
    """The call resolves into an imported library that is not an LLM client's."""
    q = ev.qualname(call.func, scope)
    return q is not None and "." in q and not q.startswith(LLM_MODULES)


def _is_parameter(value: Any) -> bool:
    return isinstance(value, Unknown) and value.reason == "function parameter"


def _model_values(nodes: list[ast.AST], scope: Scope, ev: Evaluator) -> list[tuple[str, Any]]:
    """Models a block asks for: `model=` keywords, `"model":` keys of a dict literal and
    arguments that name a model (outside conditions, and strings only where they can reach
    a model)."""
    out: list[tuple[str, Any]] = []
    tested = _condition_nodes(nodes)
    for n in nodes:
        if id(n) in tested:
            continue
        if isinstance(n, ast.Dict):
            for k, v in zip(n.keys, n.values, strict=True):
                if isinstance(k, ast.Constant) and k.value in ("model", "model_name"):
                    out.append((short(v, 60), ev.eval(v, scope)))
        if isinstance(n, ast.Call):
            for kw in n.keywords:
                if kw.arg in ("model", "model_name", "fallback_model"):
                    out.append((short(kw.value, 60), ev.eval(kw.value, scope)))
            other = _into_other_library(n, scope, ev)
            for arg in n.args:
                if isinstance(arg, ast.Constant) and other:
                    continue
                if _names_a_model(arg):
                    out.append((short(arg, 60), ev.eval(arg, scope)))
    return out


# how a call takes a model's settings as a whole: `llm.with_config(cfg)`, `llm.bind(cfg)`,
# `create(**cfg)`, `invoke(x, config=cfg)` / `configurable=cfg`
_CONFIG_METHODS = frozenset({"with_config", "bind"})
_CONFIG_KEYWORDS = frozenset({"config", "configurable"})


def _config_args(call: ast.Call) -> list[ast.Name]:
    """The names ``call`` takes a model's settings from as a whole."""
    out = [kw.value for kw in call.keywords if kw.arg is None or kw.arg in _CONFIG_KEYWORDS]
    if isinstance(call.func, ast.Attribute) and call.func.attr in _CONFIG_METHODS:
        out += call.args
    return [a for a in out if isinstance(a, ast.Name)]


def _tried_by_name(try_nodes: list[ast.AST], scope: Scope, ev: Evaluator) -> list[tuple[str, Any]]:
    """Models the try body hands a call as its settings through a name (:func:`_config_args`,
    outside conditions) that is bound once, above it in the same scope,
    to a dict literal (``cfg = {"model": X}``): the try body's own, so that a handler
    asking for the same ``X`` again (a token-limit retry with the same model) is no switch.
    A name only read, bound more than once or conditionally, or bound in another scope
    (a closure, a global another function may rebind) vouches for nothing."""
    out: list[tuple[str, Any]] = []
    tested = _condition_nodes(try_nodes)
    for n in try_nodes:
        if not isinstance(n, ast.Call) or id(n) in tested:
            continue
        for name in _config_args(n):
            owner, bindings = reaching(name.id, scope, name.lineno)
            if owner is not scope or len(scope.bindings.get(name.id, ())) != 1:
                continue
            [binding] = bindings
            if isinstance(binding.value, ast.Dict) and not binding.conditional:
                out += _model_values([binding.value], scope, ev)
    return out


def _assigned(node: ast.AST) -> tuple[list[ast.expr], ast.expr | None]:
    if isinstance(node, ast.Assign):
        return list(node.targets), node.value
    if isinstance(node, ast.AnnAssign | ast.AugAssign):
        return [node.target], node.value
    return [], None


def _root_names(value: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}


def _tried_sources(try_nodes: list[ast.AST]) -> dict[str, set[str]]:
    """Target text -> the names its values in the try body were built from."""
    out: dict[str, set[str]] = {}
    for n in try_nodes:
        targets, value = _assigned(n)
        if value is None:
            continue
        for t in targets:
            out.setdefault(short(t, 40), set()).update(_root_names(value))
    return out


def _is_witness(node: ast.AST, scope: Scope, ev: Evaluator) -> bool:
    if isinstance(node, ast.Raise):
        return True
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr in _LOG_METHODS:
        base = short(func.value, 60).lower()
        if "log" in base:
            return True
    q = ev.qualname(func, scope) or ""
    if q in ("warnings.warn",) or q.startswith("logging."):
        return True
    if isinstance(func, ast.Name) and func.id == "print":
        return any(kw.arg == "file" and "stderr" in short(kw.value) for kw in node.keywords)
    return False


def _holder_target(node: ast.AST, tried: dict[str, set[str]]) -> str | None:
    """The target a model, client or llm is switched into, if the assignment is one: its
    head word holds one, the value is not a non-string constant (``= None`` turns a
    feature off), and the value is not built from the same names the try body's value for
    that target was (a second way to copy the same object)."""
    targets, value = _assigned(node)
    if value is None:
        return None
    if isinstance(value, ast.Constant) and not isinstance(value.value, str):
        return None
    for t in targets:
        name = t.id if isinstance(t, ast.Name) else t.attr if isinstance(t, ast.Attribute) else ""
        if not _holds_a_model(name):
            continue
        text = short(t, 40)
        names = _root_names(value)
        if text in tried and names and names <= tried[text] | {"copy", "deepcopy"}:
            continue
        return text
    return None


def _client_call(node: ast.AST, scope: Scope, ev: Evaluator) -> str | None:
    if not isinstance(node, ast.Call):
        return None
    q = ev.qualname(node.func, scope)
    if q is not None and q.split(".")[-1] in _CLIENT_NAMES and q.startswith(LLM_MODULES):
        return q.split(".")[-1]
    return None


def fallback_sites(path: str, index: ModuleIndex, ev: Evaluator) -> list[FallbackSite]:
    if not index.handlers or not _imports_llm(index):
        return []
    out: list[FallbackSite] = []
    for handler, scope in index.handlers:
        if _only_import_errors(handler):
            continue  # an optional-import guard: it cannot hide a model's failure
        nodes = list(_body_nodes(handler.body))
        try_node = index.handler_try.get(id(handler))
        try_nodes = list(_body_nodes(try_node.body)) if try_node else []
        tried = _model_values(try_nodes, scope, ev) + _tried_by_name(try_nodes, scope, ev)
        tried_keys = {_key(v, text) for text, v in tried}
        tried_from = _tried_sources(try_nodes)
        switches: list[str] = []
        models: list[str] = []
        certain = True
        for text, value in _model_values(nodes, scope, ev):
            if _key(value, text) in tried_keys:
                continue  # a retry with the same model is not a fallback
            if _is_parameter(value):
                continue  # the caller's own model passed on: not another model
            shown = (
                f"{text} ({value!r})" if isinstance(value, str) and text != repr(value) else text
            )
            switches.append(f"asks for model {shown}")
            if isinstance(value, str):
                models.append(value)
            elif isinstance(value, Unknown):
                certain = certain and bool(tried)
        for n in nodes:
            holder = _holder_target(n, tried_from)
            if holder:
                switches.append(f"assigns {holder}")
            client = _client_call(n, scope, ev)
            if client:
                switches.append(f"constructs {client}()")
        if not switches:
            continue
        witnessed = any(_is_witness(n, scope, ev) for n in nodes)
        caught = short(handler.type, 60) if handler.type is not None else "every exception"
        out.append(
            FallbackSite(
                kind="except-handler",
                path=path,
                line=handler.lineno,
                detail=f"`except {caught}` handler " + ", ".join(dict.fromkeys(switches)),
                models=tuple(dict.fromkeys(models)),
                witnessed=witnessed,
                certain=certain,
                primary=tuple(builds(list(_body_nodes(try_node.body)), scope, ev))
                if try_node
                else (),
                fallback=tuple(builds(nodes, scope, ev)),
            )
        )
    return out


def _key(value: Any, text: str) -> str:
    if isinstance(value, str):
        return "s:" + value
    return "e:" + text
