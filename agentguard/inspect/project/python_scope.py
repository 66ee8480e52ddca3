"""Scopes of a Python module (standard ``ast`` only) and how a name resolves in them.

A name resolves the way Python resolves it: the function's own bindings (anything it
assigns, imports or declares is local to it), then enclosing functions (class bodies
are skipped), then the module, honouring ``global``/``nonlocal``. It never searches the
file for the first assignment of a name. Where a name has more than one reaching
binding (assigned in an ``if`` branch, say) the result is a :class:`OneOf`; where a
value cannot be known (a parameter, an environment variable, a call, a list mutated
with ``append``) it is :class:`Unknown`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from agentguard.inspect.project.model import PathSym, Unknown
from agentguard.inspect.project.python_walk import Walker

MAX_DEPTH = 24  # name -> name -> ... chains deeper than this are unknown (and cycles end)

_MUTATORS = {
    "append",
    "extend",
    "insert",
    "remove",
    "pop",
    "clear",
    "update",
    "add",
    "discard",
    "setdefault",
}


@dataclass(frozen=True)
class Imported:
    """A name bound by an import: its fully qualified origin."""

    qualname: str


@dataclass(frozen=True)
class CallRef:
    """A call whose result is an object we track (``ClaudeAgentOptions(...)``)."""

    qualname: str
    node: ast.Call
    scope: Scope


_PYTEST_TEMP_FIXTURES = frozenset({"tmp_path", "tmpdir"})


@dataclass
class Binding:
    value: ast.AST | Imported | Unknown | PathSym  # the assigned expression, or what it is
    line: int
    conditional: bool  # inside an if/loop/except/match branch of its scope
    node: ast.FunctionDef | ast.AsyncFunctionDef | None = None  # a ``def`` binding's own


@dataclass(eq=False)
class Scope:
    kind: str  # "module" | "function" | "class" | "comprehension"
    name: str
    parent: Scope | None
    bindings: dict[str, list[Binding]] = field(default_factory=dict)
    globals_: set[str] = field(default_factory=set)
    nonlocals: set[str] = field(default_factory=set)
    mutations: dict[str, list[int]] = field(default_factory=dict)  # name -> lines

    def bind(self, name: str, binding: Binding) -> None:
        self.bindings.setdefault(name, []).append(binding)


def short(node: ast.AST, limit: int = 80) -> str:
    """Source text of an expression for messages (shortened)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return f"{node.value.id}.{node.attr}"
    try:
        text = ast.unparse(node)
    except Exception:  # unparse of a malformed tree; the text is only for messages
        text = type(node).__name__
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class ModuleIndex(Walker):
    """Builds the scopes of one module and remembers the scope of every call."""

    def __init__(self, tree: ast.Module) -> None:
        super().__init__()
        self.module = Scope("module", "<module>", None)
        self.scope = self.module
        self.cond_depth = 0
        self.calls: list[tuple[ast.Call, Scope]] = []
        self.handlers: list[tuple[ast.ExceptHandler, Scope]] = []
        self.handler_try: dict[int, ast.Try] = {}  # id(handler) -> its try
        self.lists: list[tuple[ast.List, Scope]] = []
        self.dicts: list[tuple[ast.Dict, Scope]] = []
        # obj.attr = value: (target, value, scope, conditional); setattr(obj, "attr", value)
        self.attr_assigns: list[tuple[ast.Attribute, ast.AST, Scope, bool]] = []
        # setattr(obj, name, value) with a name not written literally; setattr(*args)
        self.setattrs_unknown: list[tuple[ast.Call, Scope]] = []
        self.setattrs_starred: list[tuple[ast.Call, Scope]] = []
        # the first part of every imported qualname, in any scope (``""`` for a relative
        # import): every qualname the Evaluator resolves starts with one of them, so an
        # extractor whose modules are not among them has nothing to find
        self.import_roots: set[str] = set()
        # names bound somewhere to an import or to another name or attribute: only these
        # can resolve to an imported qualname
        self.alias_names: set[str] = set()
        # id(def or lambda node) -> its own scope (where its body's names resolve)
        self.function_scopes: dict[int, Scope] = {}
        self.visit(tree)

    # -- scopes -----------------------------------------------------------------
    def _enter(self, kind: str, name: str) -> tuple[Scope, int]:
        saved = (self.scope, self.cond_depth)
        self.scope = Scope(kind, name, self.scope)
        self.cond_depth = 0
        return saved

    def _leave(self, saved: tuple[Scope, int]) -> None:
        self.scope, self.cond_depth = saved

    def _bind(
        self,
        name: str,
        value: ast.AST | Imported | Unknown | PathSym,
        line: int,
        node: ast.FunctionDef | ast.AsyncFunctionDef | None = None,
    ) -> None:
        if isinstance(value, Imported):
            self.import_roots.add(value.qualname.split(".", 1)[0])
            self.alias_names.add(name)
        elif isinstance(value, ast.Name | ast.Attribute):
            self.alias_names.add(name)
        target = self.scope
        if name in self.scope.globals_:
            target = self.module
        self.scope.bind(name, Binding(value, line, self.cond_depth > 0, node))
        if target is not self.scope:
            target.bind(name, Binding(value, line, True, node))

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        for d in getattr(node, "decorator_list", []):
            self.visit(d)
        args = node.args
        for default in [*args.defaults, *[d for d in args.kw_defaults if d is not None]]:
            self.visit(default)
        if not isinstance(node, ast.Lambda):
            self._bind(node.name, Unknown(f"def {node.name}", "function"), node.lineno, node)
        saved = self._enter("function", getattr(node, "name", "<lambda>"))
        self.function_scopes[id(node)] = self.scope
        test = getattr(node, "name", "").startswith("test")
        for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
            if a is not None:
                # pytest hands a test its own new folder by these names (reserved fixtures)
                made = test and a.arg in _PYTEST_TEMP_FIXTURES
                self._bind(
                    a.arg,
                    PathSym("temp") if made else Unknown(a.arg, "function parameter"),
                    a.lineno,
                )
        body = node.body if isinstance(node.body, list) else [node.body]
        for stmt in body:
            self.visit(stmt)
        self._leave(saved)

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function
    visit_Lambda = _function

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for d in [*node.decorator_list, *node.bases, *[k.value for k in node.keywords]]:
            self.visit(d)
        self._bind(node.name, Unknown(f"class {node.name}", "class"), node.lineno)
        saved = self._enter("class", node.name)
        for stmt in node.body:
            self.visit(stmt)
        self._leave(saved)

    def _comprehension(
        self, node: ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp
    ) -> None:
        self.visit(node.generators[0].iter)
        saved = self._enter("comprehension", "<comprehension>")
        for i, gen in enumerate(node.generators):
            if i:
                self.visit(gen.iter)
            self._bind_target(gen.target, Unknown(short(gen.target), "loop variable"))
            for cond in gen.ifs:
                self.visit(cond)
        if isinstance(node, ast.DictComp):
            self.visit(node.key)
            self.visit(node.value)
        else:
            self.visit(node.elt)
        self._leave(saved)

    visit_ListComp = _comprehension
    visit_SetComp = _comprehension
    visit_DictComp = _comprehension
    visit_GeneratorExp = _comprehension

    def visit_Global(self, node: ast.Global) -> None:
        self.scope.globals_.update(node.names)

    def visit_Nonlocal(self, node: ast.Nonlocal) -> None:
        self.scope.nonlocals.update(node.names)

    # -- bindings ---------------------------------------------------------------
    def _bind_target(self, target: ast.AST, value: ast.AST | Unknown) -> None:
        if isinstance(target, ast.Attribute) and isinstance(value, ast.AST):
            self.attr_assigns.append((target, value, self.scope, self.cond_depth > 0))
        if isinstance(target, ast.Name):
            self._bind(target.id, value, target.lineno)
        elif isinstance(target, ast.Tuple | ast.List):
            for elt in target.elts:
                inner = elt.value if isinstance(elt, ast.Starred) else elt
                self._bind_target(inner, Unknown(short(target), "unpacked from a sequence"))
        elif isinstance(target, ast.Attribute | ast.Subscript):
            base = target.value
            if isinstance(target, ast.Subscript) and isinstance(base, ast.Name):
                self.scope.mutations.setdefault(base.id, []).append(target.lineno)
            self.visit(target)

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        for t in node.targets:
            self._bind_target(t, node.value)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)
            self._bind_target(node.target, node.value)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.visit(node.value)
        if isinstance(node.target, ast.Name):
            self._bind(
                node.target.id,
                Unknown(short(node), f"changed by augmented assignment at line {node.lineno}"),
                node.lineno,
            )
        else:
            self._bind_target(node.target, node.value)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.visit(node.value)
        scope = self.scope
        while scope.kind == "comprehension" and scope.parent is not None:
            scope = scope.parent
        if isinstance(node.value, ast.Name | ast.Attribute):
            self.alias_names.add(node.target.id)
        scope.bind(node.target.id, Binding(node.value, node.lineno, True))

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.asname:
                self._bind(alias.asname, Imported(alias.name), node.lineno)
            else:
                top = alias.name.split(".")[0]
                self._bind(top, Imported(top), node.lineno)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = ("." * node.level) + (node.module or "")
        for alias in node.names:
            if alias.name == "*":
                continue
            name = alias.asname or alias.name
            qual = f"{module}.{alias.name}" if module else alias.name
            self._bind(name, Imported(qual.lstrip(".") if node.level == 0 else qual), node.lineno)

    def _conditional(self, node: ast.AST) -> None:
        self.cond_depth += 1
        self.generic_visit(node)
        self.cond_depth -= 1

    def visit_If(self, node: ast.If) -> None:
        self.visit(node.test)
        self.cond_depth += 1
        for stmt in [*node.body, *node.orelse]:
            self.visit(stmt)
        self.cond_depth -= 1

    def _loop(self, node: ast.For | ast.AsyncFor | ast.While) -> None:
        if isinstance(node, ast.For | ast.AsyncFor):
            self.visit(node.iter)
            self.cond_depth += 1
            self._bind_target(node.target, Unknown(short(node.target), "loop variable"))
        else:
            self.visit(node.test)
            self.cond_depth += 1
        for stmt in [*node.body, *node.orelse]:
            self.visit(stmt)
        self.cond_depth -= 1

    visit_For = _loop
    visit_AsyncFor = _loop
    visit_While = _loop

    def _try(self, node: ast.Try) -> None:
        for handler in node.handlers:
            self.handler_try[id(handler)] = node
        for stmt in node.body:
            self.visit(stmt)
        self.cond_depth += 1
        for handler in node.handlers:
            self.visit(handler)
        for stmt in node.orelse:
            self.visit(stmt)
        self.cond_depth -= 1
        for stmt in node.finalbody:
            self.visit(stmt)

    visit_Try = _try
    visit_TryStar = _try  # Python 3.11+: except*; same fields as Try

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        self.handlers.append((node, self.scope))
        if node.type is not None:
            self.visit(node.type)
        if node.name:
            self._bind(node.name, Unknown(node.name, "caught exception"), node.lineno)
        for stmt in node.body:
            self.visit(stmt)

    def visit_Match(self, node: ast.Match) -> None:
        self.visit(node.subject)
        self.cond_depth += 1
        for case in node.cases:
            for sub in ast.walk(case.pattern):
                name = getattr(sub, "name", None)
                if isinstance(name, str):
                    self._bind(name, Unknown(name, "match capture"), case.pattern.lineno)
            if case.guard is not None:
                self.visit(case.guard)
            for stmt in case.body:
                self.visit(stmt)
        self.cond_depth -= 1

    def _with(self, node: ast.With | ast.AsyncWith) -> None:
        for item in node.items:
            self.visit(item.context_expr)
            if item.optional_vars is not None:
                expr = item.context_expr
                # `with tempfile.TemporaryDirectory() as d`: d is the new folder's path (the
                # evaluator checks the callee is tempfile's); any other manager's value is not read
                made = isinstance(expr, ast.Call) and short(expr.func).endswith(
                    "TemporaryDirectory"
                )
                self._bind_target(
                    item.optional_vars,
                    expr if made else Unknown(short(expr), "context manager value"),
                )
        for stmt in node.body:
            self.visit(stmt)

    visit_With = _with
    visit_AsyncWith = _with

    def visit_Delete(self, node: ast.Delete) -> None:
        for t in node.targets:
            if isinstance(t, ast.Name):
                self._bind(t.id, Unknown(t.id, "deleted"), node.lineno)
            else:
                self.visit(t)

    # -- what the extractors want ---------------------------------------------------
    def visit_Call(self, node: ast.Call) -> None:
        self.calls.append((node, self.scope))
        func = node.func
        if isinstance(func, ast.Name) and func.id == "setattr":
            self._setattr(node)
        if (
            isinstance(func, ast.Attribute)
            and func.attr in _MUTATORS
            and isinstance(func.value, ast.Name)
        ):
            self.scope.mutations.setdefault(func.value.id, []).append(node.lineno)
        self.generic_visit(node)

    def _setattr(self, node: ast.Call) -> None:
        """``setattr(obj, "name", value)`` is ``obj.name = value``; with a name not written
        literally (or ``setattr(*args)``) it may set any attribute of ``obj``."""
        args = node.args
        literal = (
            len(args) == 3
            and not node.keywords
            and not any(isinstance(a, ast.Starred) for a in args)
            and isinstance(args[1], ast.Constant)
            and isinstance(args[1].value, str)
        )
        name = args[1].value if literal and isinstance(args[1], ast.Constant) else None
        if isinstance(name, str):
            target = ast.Attribute(value=args[0], attr=name, ctx=ast.Store())
            ast.copy_location(target, node)
            self.attr_assigns.append((target, args[2], self.scope, self.cond_depth > 0))
        elif args and not isinstance(args[0], ast.Starred):
            self.setattrs_unknown.append((node, self.scope))
        else:
            self.setattrs_starred.append((node, self.scope))

    def visit_List(self, node: ast.List) -> None:
        self.lists.append((node, self.scope))
        self.generic_visit(node)

    def visit_Dict(self, node: ast.Dict) -> None:
        self.dicts.append((node, self.scope))
        self.generic_visit(node)
