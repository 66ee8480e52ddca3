"""Static evaluation of Python expressions over the scopes of :mod:`python_scope`.

Values are plain data, :class:`~agentguard.inspect.project.model.Unknown`,
:class:`~agentguard.inspect.project.model.PathSym` (``Path(__file__).parent``,
``os.getcwd()``), :class:`~agentguard.inspect.project.model.OneOf` (a branch decides),
:class:`~agentguard.inspect.project.python_scope.Imported` (a module or imported name) and
:class:`~agentguard.inspect.project.python_scope.CallRef` (a call we track).
"""

from __future__ import annotations

import ast
import posixpath
from collections.abc import Callable
from typing import Any

from agentguard.inspect.project.model import OneOf, PathSym, Unknown
from agentguard.inspect.project.python_scope import (
    MAX_DEPTH,
    Binding,
    CallRef,
    Imported,
    ModuleIndex,
    Scope,
    short,
)

# --------------------------------------------------------------------------------------
# Name resolution
# --------------------------------------------------------------------------------------


def _owner(name: str, scope: Scope) -> Scope | None:
    """The scope whose binding of ``name`` a load in ``scope`` sees (Python's rules)."""
    if name in scope.globals_:
        return _module_of(scope)
    if name in scope.nonlocals:
        s = scope.parent
        while s is not None and not (s.kind == "function" and name in s.bindings):
            s = s.parent
        return s
    if name in scope.bindings:
        return scope
    s = scope.parent
    while s is not None:
        if s.kind != "class" and name in s.bindings and name not in s.globals_:
            return s
        if name in s.globals_:
            return _module_of(s)
        s = s.parent
    return None


def _module_of(scope: Scope) -> Scope:
    while scope.parent is not None:
        scope = scope.parent
    return scope


def reaching(name: str, scope: Scope, line: int) -> tuple[Scope | None, list[Binding]]:
    """The bindings of ``name`` that may hold its value when read at ``line`` in ``scope``."""
    if name in scope.globals_ and name in scope.bindings and scope.parent is not None:
        # `global X` in a function: its own assignments above the read win, in order
        own = [b for b in scope.bindings[name] if b.line <= line]
        plain = max((i for i, b in enumerate(own) if not b.conditional), default=None)
        if plain is not None:
            return _module_of(scope), own[plain:]
    owner = _owner(name, scope)
    if owner is None or name not in owner.bindings:  # (`global X` where no X is assigned)
        return None, []
    bindings = owner.bindings[name]
    # Read from the same scope: only bindings above the read count (straight-line code).
    # Read from a nested function: it runs later, so every binding of the owner counts.
    limit = line if owner is scope else None
    eligible = [b for b in bindings if limit is None or b.line <= limit]
    if not eligible:
        eligible = list(bindings)
    last_plain = max(
        (i for i, b in enumerate(eligible) if not b.conditional),
        default=None,
    )
    chosen = eligible if last_plain is None else eligible[last_plain:]
    return owner, chosen


class Evaluator:
    """Evaluates expressions of one module to plain values, symbols or unknowns."""

    def __init__(self, index: ModuleIndex, tracked: Callable[[str], bool]) -> None:
        self.index = index
        self.tracked = tracked  # qualnames whose calls are returned as CallRef
        # every extractor asks for the callee of every call: answer each once
        self._callees: dict[tuple[int, int], tuple[str, ...]] = {}

    def qualname(self, node: ast.AST, scope: Scope, depth: int = 0) -> str | None:
        """The imported origin of a callee (``claude_agent_sdk.query``), when it is one."""
        names = self.qualnames(node, scope, depth)
        return names[0] if len(names) == 1 else None

    def qualnames(self, node: ast.AST, scope: Scope, depth: int = 0) -> tuple[str, ...]:
        """Every imported origin the expression may name (an import in try/except names two)."""
        if depth:
            return self._qualnames(node, scope, depth)
        key = (id(node), id(scope))
        found = self._callees.get(key)
        if found is None:
            found = self._callees[key] = self._qualnames(node, scope, 0)
        return found

    def _qualnames(self, node: ast.AST, scope: Scope, depth: int) -> tuple[str, ...]:
        attrs: list[str] = []
        base = node
        while isinstance(base, ast.Attribute):
            attrs.append(base.attr)
            base = base.value
        if not isinstance(base, ast.Name) or depth > MAX_DEPTH:
            return ()
        if base.id not in self.index.alias_names:
            return ()  # no binding of it anywhere is an import or another name (`self`)
        owner, bindings = reaching(base.id, scope, base.lineno)
        if owner is None:
            return ()
        heads: list[str] = []
        for b in bindings:
            if isinstance(b.value, Imported):
                heads.append(b.value.qualname)
            elif isinstance(b.value, ast.Name | ast.Attribute):
                heads.extend(self.qualnames(b.value, owner, depth + 1))
            else:
                return ()  # one of the bindings is not an import: not a known callee
        tail = list(reversed(attrs))
        return tuple(dict.fromkeys(".".join([h, *tail]) for h in heads))

    def eval(self, node: ast.AST, scope: Scope, depth: int = 0) -> Any:
        if depth > MAX_DEPTH:
            return Unknown(short(node), "too many indirections")
        d = depth + 1
        if isinstance(node, ast.Constant):
            if isinstance(node.value, bytes) or node.value is Ellipsis:
                return Unknown(short(node), "not a text value")
            return node.value
        if isinstance(node, ast.List | ast.Tuple | ast.Set):
            items: list[Any] = []
            for elt in node.elts:
                if isinstance(elt, ast.Starred):
                    inner = self.eval(elt.value, scope, d)
                    if isinstance(inner, tuple):
                        items.extend(inner)
                    else:
                        items.append(Unknown(short(elt), "unpacked value"))
                else:
                    items.append(self.eval(elt, scope, d))
            return tuple(items)
        if isinstance(node, ast.Dict):
            out: dict[str, Any] = {}
            for k, v in zip(node.keys, node.values, strict=True):
                if k is None:
                    inner = self.eval(v, scope, d)
                    if isinstance(inner, dict):
                        out.update(inner)
                    else:
                        out["**"] = Unknown(short(v), "unpacked mapping")
                    continue
                key = self.eval(k, scope, d)
                out[key if isinstance(key, str) else short(k)] = self.eval(v, scope, d)
            return out
        if isinstance(node, ast.Name):
            return self._name(node, scope, d)
        if isinstance(node, ast.Attribute):
            return self._attribute(node, scope, d)
        if isinstance(node, ast.Call):
            return self._call(node, scope, d)
        if isinstance(node, ast.Subscript):
            return self._subscript(node, scope, d)
        if isinstance(node, ast.BinOp):
            return self._binop(node, scope, d)
        if isinstance(node, ast.IfExp):
            return OneOf((self.eval(node.body, scope, d), self.eval(node.orelse, scope, d)))
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
            alts: list[Any] = []
            for v in node.values:
                val = self.eval(v, scope, d)
                if isinstance(val, Unknown | OneOf):
                    alts.append(val)
                    continue
                if val:
                    alts.append(val)
                    break
            return alts[0] if len(alts) == 1 else OneOf(tuple(alts))
        if isinstance(node, ast.JoinedStr):
            parts = []
            for v in node.values:
                if isinstance(v, ast.Constant) and isinstance(v.value, str):
                    parts.append(v.value)
                else:
                    return Unknown(short(node), "formatted string")
            return "".join(parts)
        if isinstance(node, ast.NamedExpr):
            return self.eval(node.value, scope, d)
        return Unknown(short(node), "expression")

    def _name(self, node: ast.Name, scope: Scope, depth: int) -> Any:
        if node.id == "__file__":
            return PathSym("source-file")
        owner, bindings = reaching(node.id, scope, node.lineno)
        if owner is None:
            if node.id in ("True", "False", "None"):
                return {"True": True, "False": False, "None": None}[node.id]
            return Unknown(node.id, "name not defined in this file")
        values = [self._binding(b, owner, depth) for b in bindings]
        mutated = [ln for ln in owner.mutations.get(node.id, [])]
        if mutated:
            values = [
                _with_unknown_tail(v, Unknown(node.id, f"modified at line {mutated[0]}"))
                for v in values
            ]
        return values[0] if len(values) == 1 else OneOf(tuple(values))

    def _binding(self, b: Binding, owner: Scope, depth: int) -> Any:
        if isinstance(b.value, Imported | Unknown | PathSym):
            return b.value
        return self.eval(b.value, owner, depth)

    def _attribute(self, node: ast.Attribute, scope: Scope, depth: int) -> Any:
        base = self.eval(node.value, scope, depth)
        if isinstance(base, Imported):
            return Imported(f"{base.qualname}.{node.attr}")
        if isinstance(base, PathSym):
            if node.attr == "parent":
                return parent_path(base)
            if node.attr in ("parents", "name", "stem", "suffix"):
                return Unknown(short(node), f"path attribute {node.attr}")
        if isinstance(base, OneOf):
            return Unknown(short(node), "attribute of a branch-dependent value")
        if isinstance(base, Unknown):
            return Unknown(short(node), base.reason)
        return Unknown(short(node), "attribute")

    def _call(self, node: ast.Call, scope: Scope, depth: int) -> Any:
        func = node.func
        # Methods on symbolic paths: Path(__file__).resolve().parent
        if isinstance(func, ast.Attribute):
            if func.attr in ("resolve", "absolute", "expanduser") and not node.args:
                base = self.eval(func.value, scope, depth)
                if isinstance(base, PathSym | str):
                    return base
            if func.attr in ("cwd", "getcwd") and not node.args:
                q = self.qualname(func.value, scope, depth)
                if q in ("pathlib.Path", "pathlib.PurePath", "os", "pathlib.PosixPath"):
                    return PathSym("process-cwd")
            if func.attr == "home" and not node.args:
                return PathSym("home")
        q = self.qualname(func, scope, depth)
        if q is None:
            return Unknown(short(node), f"result of {short(func, 40)}()")
        if self.tracked(q):
            return CallRef(q, node, scope)
        args = [self.eval(a, scope, depth) for a in node.args]
        if q in ("os.getcwd", "os.getcwdb", "pathlib.Path.cwd"):
            return PathSym("process-cwd")
        if q in ("tempfile.mkdtemp", "tempfile.gettempdir", "tempfile.TemporaryDirectory"):
            return PathSym("temp")  # (the last as a `with` target: the new folder's path)
        if q in ("os.getenv", "os.environ.get") and args:
            var = args[0] if isinstance(args[0], str) else short(node.args[0])
            env = Unknown(short(node), f"environment variable {var}")
            if len(args) > 1:
                return OneOf((env, args[1]))
            return env
        if q in (
            "pathlib.Path",
            "pathlib.PurePath",
            "pathlib.PosixPath",
            "os.path.abspath",
            "os.path.realpath",
            "os.path.normpath",
            "os.fspath",
            "str",
            "os.path.expanduser",
        ):
            if not args:
                return PathSym("process-cwd") if q.startswith("pathlib") else ""
            if len(args) == 1:
                return _as_path(args[0])
            return join_path(args)
        if q == "os.path.join" and args:
            return join_path(args)
        if q == "os.path.dirname" and len(args) == 1:
            return parent_path(_as_path(args[0]))
        if q in ("list", "tuple", "sorted", "set", "frozenset") and len(args) == 1:
            return args[0] if isinstance(args[0], tuple) else Unknown(short(node), "conversion")
        if q == "dict" and not args:
            return {k.arg: self.eval(k.value, scope, depth) for k in node.keywords if k.arg}
        return Unknown(short(node), f"result of {q}()")

    def _subscript(self, node: ast.Subscript, scope: Scope, depth: int) -> Any:
        base_q = self.qualname(node.value, scope, depth)
        if base_q == "os.environ":
            key = self.eval(node.slice, scope, depth)
            return Unknown(short(node), f"environment variable {key}")
        base = self.eval(node.value, scope, depth)
        key = self.eval(node.slice, scope, depth)
        if isinstance(node.value, ast.Attribute) and node.value.attr == "parents":
            inner = self.eval(node.value.value, scope, depth)
            if isinstance(inner, PathSym) and isinstance(key, int) and key >= 0:
                out = inner
                for _ in range(key + 1):
                    out = parent_path(out)
                return out
        if isinstance(base, tuple) and isinstance(key, int) and -len(base) <= key < len(base):
            return base[key]
        if isinstance(base, dict) and isinstance(key, str) and key in base:
            return base[key]
        return Unknown(short(node), "subscript")

    def _binop(self, node: ast.BinOp, scope: Scope, depth: int) -> Any:
        left = self.eval(node.left, scope, depth)
        right = self.eval(node.right, scope, depth)
        if isinstance(node.op, ast.Add):
            if isinstance(left, tuple) and isinstance(right, tuple):
                return left + right
            if isinstance(left, str) and isinstance(right, str):
                return left + right
            if isinstance(left, tuple):
                return (*left, Unknown(short(node.right), "added value"))
            if isinstance(right, tuple):
                return (Unknown(short(node.left), "added value"), *right)
        if isinstance(node.op, ast.Div) and isinstance(left, PathSym | str):
            return join_path([left, right])
        return Unknown(short(node), "computed value")


def _with_unknown_tail(value: Any, unknown: Unknown) -> Any:
    if isinstance(value, tuple):
        return (*value, unknown)
    if isinstance(value, dict):
        return {**value, "**": unknown}
    return unknown


def _as_path(value: Any) -> Any:
    if isinstance(value, PathSym):
        if value.base == "source-file":
            return value
        return value
    if isinstance(value, str):
        if value in (".", "./", ""):
            return PathSym("process-cwd")
        if value in ("..", "../"):
            return PathSym("process-cwd", up=1)
        if value.startswith("./") and value.strip("./"):
            return PathSym("process-cwd", sub=value[2:].rstrip("/"))
        if value == "~":
            return PathSym("home")
    return value


def parent_path(value: Any) -> Any:
    if isinstance(value, PathSym):
        if value.base == "source-file":
            return PathSym("source-dir")
        if value.sub:
            parts = value.sub.rstrip("/").split("/")
            return PathSym(value.base, value.up, "/".join(parts[:-1]))
        return PathSym(value.base, value.up + 1)
    if isinstance(value, str) and value.startswith("/"):
        return posixpath.dirname(value.rstrip("/")) or "/"
    return Unknown(str(value), "parent of an unknown path")


def join_path(parts: list[Any]) -> Any:
    import posixpath

    head = _as_path(parts[0])
    for part in parts[1:]:
        if isinstance(part, str) and part.startswith("/"):
            head = part
            continue
        if isinstance(head, PathSym) and isinstance(part, str):
            for seg in part.split("/"):
                if seg in ("", "."):
                    continue
                if seg == "..":
                    head = parent_path(head)
                else:
                    sub = f"{head.sub}/{seg}" if head.sub else seg
                    head = PathSym(head.base, head.up, sub)
            continue
        if isinstance(head, str) and isinstance(part, str):
            head = posixpath.normpath(posixpath.join(head, part))
            continue
        return Unknown(" / ".join(str(p) for p in parts), "joined path")
    return head


def plain(value: Any) -> Any:
    """A value as facts hold it: imports and tracked calls become :class:`Unknown`."""
    if isinstance(value, Imported):
        return Unknown(value.qualname, "imported from another module")
    if isinstance(value, CallRef):
        return Unknown(short(value.node), f"result of {value.qualname}()")
    if isinstance(value, tuple):
        return tuple(plain(v) for v in value)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, OneOf):
        return OneOf(tuple(plain(v) for v in value.alternatives))
    return value
