"""A faster walk over a Python syntax tree than :class:`ast.NodeVisitor`'s.

``visit_<Type>`` methods are found once per class and looked up by the node's type (no
``getattr`` by name per node); the generic walk visits the children in field order, as
:class:`ast.NodeVisitor` does, passing over leaves (names, constants, contexts,
operators) without a call; the commonest small nodes have their own short walk.
A subclass that wants a leaf defines its ``visit_<Leaf>``.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any


class Walker(ast.NodeVisitor):
    """``ast.NodeVisitor`` with a type -> method table."""

    def __init__(self) -> None:
        self._dispatch = _dispatch_table(type(self))

    def visit(self, node: ast.AST) -> None:
        method = self._dispatch.get(type(node))
        if method is None:
            self.generic_visit(node)
        else:
            method(self, node)

    def generic_visit(self, node: ast.AST) -> None:
        # the children in field order, as ast.NodeVisitor visits them; a leaf (a name, a
        # constant, a context, an operator) is passed over here, without a call
        table = self._dispatch
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, list):
                for item in value:
                    method = table.get(type(item))
                    if method is None:
                        if isinstance(item, ast.AST):
                            self.generic_visit(item)
                    elif method is not _skip:
                        method(self, item)
                continue
            method = table.get(type(value))
            if method is None:
                if isinstance(value, ast.AST):
                    self.generic_visit(value)
            elif method is not _skip:
                method(self, value)

    # the commonest nodes, walked without the generic loop (same children, same order)
    def _value(self, node: ast.Attribute | ast.keyword | ast.Expr | ast.Await) -> None:
        self.visit(node.value)

    visit_Attribute = _value
    visit_keyword = _value
    visit_Expr = _value
    visit_Await = _value

    def visit_Subscript(self, node: ast.Subscript) -> None:
        self.visit(node.value)
        self.visit(node.slice)

    def visit_Compare(self, node: ast.Compare) -> None:
        self.visit(node.left)
        for comparator in node.comparators:
            self.visit(comparator)


_TABLES: dict[type, dict[type, Callable[[Any, Any], None]]] = {}


def _dispatch_table(cls: type) -> dict[type, Callable[[Any, Any], None]]:
    table = _TABLES.get(cls)
    if table is None:
        table = {}
        for attr in dir(cls):
            # (ast.NodeVisitor's own visit_Constant is a slow compatibility shim: a leaf
            # is skipped instead)
            if attr.startswith("visit_") and getattr(cls, attr) is not getattr(
                ast.NodeVisitor, attr, None
            ):
                node_type = getattr(ast, attr[6:], None)
                if isinstance(node_type, type):
                    table[node_type] = getattr(cls, attr)
        # leaves: nothing below them to walk (operators and contexts have no fields)
        leaves = [ast.Constant, ast.Name]
        for base in (ast.expr_context, ast.operator, ast.boolop, ast.unaryop, ast.cmpop):
            leaves += base.__subclasses__()
        for leaf in leaves:
            table.setdefault(leaf, _skip)
        _TABLES[cls] = table
    return table


def _skip(_self: Any, _node: Any) -> None:
    return None
