"""Does a permission callback or a PreToolUse hook ever say no? Read from its code.

A ``can_use_tool`` callback or a PreToolUse hook is a gate only if some path through it
can deny: it returns ``PermissionResultDeny(...)``, a hook decision that blocks
(``{"decision": "block"}``, ``permissionDecision: "deny"``/``"ask"``, ``"continue": False``),
raises, or returns a decision computed at run time (that may deny). One that returns only
``PermissionResultAllow()``, ``{}`` or ``None`` on every path is a rubber stamp. A callback
imported from elsewhere, a parameter, a method or one built by a call is not read here:
its verdict is unknown (never credited, never called a stamp). Pure, over the module's
scopes (:mod:`.python_scope`).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from agentguard.inspect.project.model import CAN_DENY, NEVER_DENIES, UNKNOWN_GATE, GateVerdict
from agentguard.inspect.project.python_eval import reaching
from agentguard.inspect.project.python_scope import Imported, ModuleIndex, Scope, short

MAX_DEPTH = 8
_DENY_CALLS = frozenset({"PermissionResultDeny"})
_ALLOW_CALLS = frozenset({"PermissionResultAllow"})
_DENY_VALUES = {
    "decision": frozenset({"block", "deny"}),
    "permissionDecision": frozenset({"deny", "ask"}),
    "behavior": frozenset({"deny"}),
}

Verdict = tuple[str, str]  # (CAN_DENY | NEVER_DENIES | UNKNOWN_GATE, why)


def callback_verdicts(
    kwargs: dict[str, ast.expr], scope: Scope, index: ModuleIndex
) -> tuple[GateVerdict, ...]:
    """Verdicts for the ``can_use_tool`` and ``hooks`` keywords of an options call."""
    out: list[GateVerdict] = []
    cb = kwargs.get("can_use_tool")
    if cb is not None and not (isinstance(cb, ast.Constant) and cb.value is None):
        verdict, why = judge_callable(cb, scope, index, 0)
        out.append(GateVerdict("can_use_tool", verdict, why))
    hooks = kwargs.get("hooks")
    if hooks is not None:
        for i, matcher in enumerate(_pre_tool_use(hooks, scope)):
            verdict, why = _matcher(matcher, scope, index)
            out.append(GateVerdict(f"PreToolUse[{i}]", verdict, why))
    return tuple(out)


def _pre_tool_use(hooks: ast.expr, scope: Scope) -> list[ast.expr]:
    """The matchers of ``hooks={"PreToolUse": [...]}`` (a literal, or a name bound once)."""
    node = _single_value(hooks, scope)
    if not isinstance(node, ast.Dict):
        return []
    for key, value in zip(node.keys, node.values, strict=True):
        if isinstance(key, ast.Constant) and key.value == "PreToolUse":
            value = _single_value(value, scope)
            if isinstance(value, ast.List | ast.Tuple):
                return list(value.elts)
    return []


def _single_value(node: ast.expr, scope: Scope) -> ast.expr:
    if isinstance(node, ast.Name):
        _owner, bindings = reaching(node.id, scope, node.lineno)
        if len(bindings) == 1 and isinstance(bindings[0].value, ast.expr):
            return bindings[0].value
    return node


def _matcher(matcher: ast.expr, scope: Scope, index: ModuleIndex) -> Verdict:
    callbacks: ast.expr | None = None
    if isinstance(matcher, ast.Call):
        callbacks = next((k.value for k in matcher.keywords if k.arg == "hooks"), None)
        if callbacks is None and len(matcher.args) > 1:
            callbacks = matcher.args[1]
    elif isinstance(matcher, ast.Dict):
        for key, value in zip(matcher.keys, matcher.values, strict=True):
            if isinstance(key, ast.Constant) and key.value == "hooks":
                callbacks = value
    if callbacks is not None:
        callbacks = _single_value(callbacks, scope)
    if not isinstance(callbacks, ast.List | ast.Tuple):
        return UNKNOWN_GATE, f"its hooks (`{short(matcher, 60)}`) are not a list written here"
    verdicts = [judge_callable(c, scope, index, 0) for c in callbacks.elts]
    for v in verdicts:
        if v[0] == CAN_DENY:
            return v
    for v in verdicts:
        if v[0] == UNKNOWN_GATE:
            return v
    return NEVER_DENIES, "; ".join(why for _v, why in verdicts) or "it runs no hook"


def judge_callable(node: ast.expr, scope: Scope, index: ModuleIndex, depth: int) -> Verdict:
    """What the callable ``node`` (a lambda, a name of a ``def``) does with a call."""
    if depth > MAX_DEPTH:
        return UNKNOWN_GATE, f"`{short(node, 40)}` is too many names away"
    if isinstance(node, ast.Lambda):
        inner = index.function_scopes.get(id(node), scope)
        kind, why = _returned(node.body, inner, depth)
        if kind == "allow":
            return NEVER_DENIES, f"`{short(node, 60)}` always allows"
        return CAN_DENY, f"`{short(node, 60)}` {why}"
    if isinstance(node, ast.Name):
        _owner, bindings = reaching(node.id, scope, node.lineno)
        if not bindings:
            return UNKNOWN_GATE, f"`{node.id}` is not defined in this file"
        alts: list[Verdict] = []
        for b in bindings:
            if b.node is not None:
                alts.append(_function(b.node, index, depth))
            elif isinstance(b.value, Imported):
                alts.append((UNKNOWN_GATE, f"`{node.id}` is imported from {b.value.qualname}"))
            elif isinstance(b.value, ast.expr):
                alts.append(judge_callable(b.value, scope, index, depth + 1))
            else:
                reason = getattr(b.value, "reason", "value not known")
                alts.append((UNKNOWN_GATE, f"`{node.id}` is a {reason}"))
        return _combine(alts)
    if isinstance(node, ast.IfExp):
        return _combine(
            [
                judge_callable(node.body, scope, index, depth + 1),
                judge_callable(node.orelse, scope, index, depth + 1),
            ]
        )
    return UNKNOWN_GATE, f"`{short(node, 60)}` is built at run time (not read)"


def _combine(alts: list[Verdict]) -> Verdict:
    """A callback that is one of several (a branch): a gate only if every one can deny."""
    if all(v == CAN_DENY for v, _ in alts):
        return alts[0]
    stamp = next((a for a in alts if a[0] == NEVER_DENIES), None)
    if stamp is not None:
        return NEVER_DENIES, stamp[1] + (" (on one branch)" if len(alts) > 1 else "")
    return next(a for a in alts if a[0] == UNKNOWN_GATE)


def _function(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, index: ModuleIndex, depth: int
) -> Verdict:
    inner = index.function_scopes.get(id(fn))
    if inner is None:
        return UNKNOWN_GATE, f"`{fn.name}` was not read"
    returned = False
    for node in _own_nodes(fn.body):
        if isinstance(node, ast.Raise):
            return CAN_DENY, f"`{fn.name}` raises (line {node.lineno})"
        if isinstance(node, ast.Yield | ast.YieldFrom):
            return UNKNOWN_GATE, f"`{fn.name}` is a generator"
        if isinstance(node, ast.Return):
            returned = True
            if node.value is None:
                continue
            kind, why = _returned(node.value, inner, depth)
            if kind != "allow":
                return CAN_DENY, f"`{fn.name}` {why} (line {node.lineno})"
    what = "allows on every path" if returned else "returns no decision"
    return NEVER_DENIES, f"`{fn.name}` {what}"


def _own_nodes(body: list[ast.stmt]) -> Iterator[ast.AST]:
    """Every node of a function body, not entering nested functions or classes."""
    stack: list[ast.AST] = list(reversed(body))
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(
                child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef
            ):
                stack.append(child)


def _returned(node: ast.expr, scope: Scope, depth: int) -> tuple[str, str]:
    """("allow" | "deny" | "computed", why) for a returned value."""
    if depth > MAX_DEPTH:
        return "computed", f"returns `{short(node, 40)}`, too many names away"
    if isinstance(node, ast.Await):
        return _returned(node.value, scope, depth + 1)
    if isinstance(node, ast.Constant) and node.value is None:
        return "allow", "returns None"
    if isinstance(node, ast.Call):
        name = _callee(node.func)
        if name in _DENY_CALLS:
            return "deny", f"returns {name}(...)"
        if name in _ALLOW_CALLS:
            return "allow", f"returns {name}(...)"
        return "computed", f"returns a decision computed at run time (`{short(node, 40)}`)"
    if isinstance(node, ast.Dict):
        return _decision(node, scope, depth)
    if isinstance(node, ast.IfExp):
        a = _returned(node.body, scope, depth + 1)
        b = _returned(node.orelse, scope, depth + 1)
        return a if a[0] != "allow" else b
    if isinstance(node, ast.Name):
        _owner, bindings = reaching(node.id, scope, node.lineno)
        values = [b.value for b in bindings]
        if values and all(isinstance(v, ast.expr) for v in values):
            for v in values:
                assert isinstance(v, ast.expr)
                got = _returned(v, scope, depth + 1)
                if got[0] != "allow":
                    return got
            return "allow", f"returns `{node.id}`, an allow"
    return "computed", f"returns a decision computed at run time (`{short(node, 40)}`)"


def _decision(node: ast.Dict, scope: Scope, depth: int) -> tuple[str, str]:
    """A hook's answer: blocks on ``decision``/``permissionDecision``/``behavior`` values
    that deny, or ``"continue": False``; nested ``hookSpecificOutput`` too."""
    for key, value in zip(node.keys, node.values, strict=True):
        if key is None:
            return "computed", "returns a mapping built at run time"
        if not isinstance(key, ast.Constant) or not isinstance(key.value, str):
            return "computed", "returns a mapping with computed keys"
        k = key.value
        if k == "hookSpecificOutput" and isinstance(value, ast.Dict):
            inner = _decision(value, scope, depth + 1)
            if inner[0] != "allow":
                return inner
            continue
        if k in _DENY_VALUES or k == "continue":
            if not isinstance(value, ast.Constant):
                return "computed", f"returns a {k!r} computed at run time"
            if k == "continue" and value.value is False:
                return "deny", "returns continue: False"
            if k in _DENY_VALUES and value.value in _DENY_VALUES[k]:
                return "deny", f"returns {k}: {value.value!r}"
    return "allow", "returns a mapping that decides nothing or allows"


def _callee(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None
