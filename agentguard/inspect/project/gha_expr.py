"""GitHub Actions expressions (the text inside ``${{ }}``), evaluated where their values are
known: a composite action's ``inputs`` as its caller passes them (or their defaults).

Literals (``'text'`` with ``''`` for a quote, numbers, ``true``/``false``/``null``),
``inputs.name`` / ``inputs['name']``, ``! == != < <= > >= && ||``, parentheses, and the
functions ``format``, ``contains``, ``startsWith``, ``endsWith``, ``join``. Every other
context (``secrets``, ``github``, ``env``, ``steps``, ``matrix``...) and every other function
is unknown, and so is whatever depends on it: an unknown is never read as empty. Bounded:
at most :data:`MAX_TOKENS` tokens per expression and :data:`MAX_DEPTH` nesting.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

MAX_TOKENS = 400
MAX_DEPTH = 30


class _Unknown:
    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN = _Unknown()
Value = str | float | bool | None | _Unknown

_TOKEN = re.compile(
    r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<num>-?\d+(?:\.\d+)?)|(?P<op>==|!=|<=|>=|&&|\|\||[!<>()\[\],.])"
    r"|(?P<name>[A-Za-z_][\w-]*))"
)


class _Fail(Exception):
    pass


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if m is None or len(out) >= MAX_TOKENS:
            raise _Fail
        kind = m.lastgroup or ""
        out.append((kind, m.group(kind)))
        pos = m.end()
    return out


def _truthy(v: Value) -> bool | _Unknown:
    if isinstance(v, _Unknown):
        return UNKNOWN
    return not (v is None or v is False or v == "" or v == 0)


def to_text(v: Value) -> str | None:
    """The value as GitHub writes it into text; None when unknown."""
    if isinstance(v, _Unknown):
        return None
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return str(int(v)) if v.is_integer() else str(v)
    return v


class _Parser:
    def __init__(self, tokens: list[tuple[str, str]], inputs: Mapping[str, str]) -> None:
        self.toks = tokens
        self.i = 0
        self.inputs = inputs
        self.depth = 0

    def peek(self) -> str | None:
        return self.toks[self.i][1] if self.i < len(self.toks) else None

    def take(self, want: str | None = None) -> tuple[str, str]:
        if self.i >= len(self.toks) or (want is not None and self.toks[self.i][1] != want):
            raise _Fail
        self.i += 1
        return self.toks[self.i - 1]

    def expr(self) -> Value:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _Fail
        left = self.and_()
        while self.peek() == "||":
            self.take()
            right = self.and_()
            t = _truthy(left)
            left = UNKNOWN if isinstance(t, _Unknown) else left if t else right
        self.depth -= 1
        return left

    def and_(self) -> Value:
        left = self.compare()
        while self.peek() == "&&":
            self.take()
            right = self.compare()
            t = _truthy(left)
            left = UNKNOWN if isinstance(t, _Unknown) else right if t else left
        return left

    def compare(self) -> Value:
        left = self.unary()
        while self.peek() in ("==", "!=", "<", "<=", ">", ">="):
            op = self.take()[1]
            right = self.unary()
            a, b = to_text(left), to_text(right)
            if a is None or b is None:
                left = UNKNOWN
            elif op in ("==", "!="):
                left = (a.lower() == b.lower()) == (op == "==")
            else:
                left = UNKNOWN  # ordering of mixed types: not needed to read a tool list
        return left

    def unary(self) -> Value:
        if self.peek() == "!":
            self.take()
            t = _truthy(self.unary())
            return UNKNOWN if isinstance(t, _Unknown) else not t
        return self.primary()

    def primary(self) -> Value:
        kind, text = self.take()
        if kind == "str":
            return text[1:-1].replace("''", "'")
        if kind == "num":
            return float(text)
        if text == "(":
            v = self.expr()
            self.take(")")
            return v
        if kind != "name":
            raise _Fail
        low = text.lower()
        if low in ("true", "false"):
            return low == "true"
        if low == "null":
            return None
        if self.peek() == "(":
            return self.call(low)
        value: Value = self.inputs_value() if low == "inputs" else UNKNOWN
        while self.peek() in (".", "["):  # other contexts: walk the path, stay unknown
            if self.take()[1] == ".":
                self.take()
            else:
                self.expr()
                self.take("]")
        return value

    def inputs_value(self) -> Value:
        if self.peek() == ".":
            self.take()
            name = self.take()[1]
        elif self.peek() == "[":
            self.take()
            key = self.expr()
            self.take("]")
            if not isinstance(key, str):
                return UNKNOWN
            name = key
        else:
            return UNKNOWN
        if self.peek() in (".", "["):
            return UNKNOWN
        got = self.inputs.get(name.lower())
        return UNKNOWN if got is None else got

    def call(self, name: str) -> Value:
        self.take("(")
        args: list[Value] = []
        while self.peek() != ")":
            args.append(self.expr())
            if self.peek() == ",":
                self.take()
        self.take(")")
        texts = [to_text(a) for a in args]
        if name == "format" and args:
            if any(t is None for t in texts):
                return UNKNOWN
            return _format(str(texts[0]), [str(t) for t in texts[1:]])
        if name in ("contains", "startswith", "endswith") and len(args) == 2:
            a, b = texts
            if a is None or b is None:
                return UNKNOWN
            a, b = a.lower(), b.lower()
            return (
                b in a
                if name == "contains"
                else a.startswith(b)
                if name[0] == "s"
                else a.endswith(b)
            )
        return UNKNOWN


def _format(template: str, args: list[str]) -> str | _Unknown:
    out: list[str] = []
    i = 0
    while i < len(template):
        ch = template[i]
        if template.startswith("{{", i) or template.startswith("}}", i):
            out.append(ch)
            i += 2
            continue
        m = re.match(r"\{(\d+)\}", template[i:])
        if m is not None:
            n = int(m.group(1))
            if n >= len(args):
                return UNKNOWN
            out.append(args[n])
            i += m.end()
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def evaluate(text: str, inputs: Mapping[str, str]) -> Value:
    """The value of one expression (``inputs`` keyed by lower-case name); UNKNOWN when it
    depends on anything not known or does not parse."""
    try:
        p = _Parser(_tokens(text), {k.lower(): v for k, v in inputs.items()})
        value = p.expr()
        return value if p.i == len(p.toks) else UNKNOWN
    except (_Fail, RecursionError):
        return UNKNOWN


def resolver(inputs: Mapping[str, str]) -> Callable[[str], str | None]:
    """A resolver for :func:`~.claude_action.substitute`: an expression's text or None."""

    def resolve(expr: str) -> str | None:
        return to_text(evaluate(expr, inputs))

    return resolve
