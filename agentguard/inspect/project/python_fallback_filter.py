"""The second-stage pre-filter of the fallback reader (:mod:`.python_fallback`): whether
any ``except`` handler of a Python file can yield a fallback site, without parsing the file.

A handler yields a site only when its body (nested functions and classes left out) holds
a switch as :func:`~.python_fallback.fallback_sites` reads one: a ``model``/``model_name``
key of a dict literal; a call with a ``model``/``model_name``/``fallback_model`` keyword, or
with an argument that names a model (a name or attribute whose head word is ``model``, a
string that is a model's name); an assignment of something other than a non-string
constant to a name whose head word holds a model, client or llm; or a call of an LLM
client class. Each of these is read from the handler's syntax alone, but for the client
call: its callee is resolved through the file's bindings (``mk = openai.OpenAI``), so a
call by a bare name counts wherever the file spells a client class in code (a name is
not followed to what binds it here: chains, walruses, targets and line ends make that a
grammar of its own, and a miss would hide a fallback).

Two stages: the handler's text (:func:`~.python_handlers.handler_texts`, a superset of its
body) must hold a word of a switch, lower-cased (a holder word, the start of a model's
name, a backslash or two adjacent strings), or the file must spell a client class; then
the handler's text alone is parsed (a few lines, where the whole file may be a megabyte
of tests) and its body searched for a switch as above, every exclusion that needs the
rest of the file (a retry with the same model, the caller's own model, a condition, a
value built from what the ``try`` used) left to the reader. Whatever cannot be parsed
alone (a text read on past the handler's end, a syntax error) counts as a switch: a file
is parsed rather than skipped. An ``except`` inside a string is a handler to this test
too, for the same reason.
"""

from __future__ import annotations

import ast
import itertools
import re
import sys
import warnings

from agentguard.inspect.project.python_fallback import (
    _CLIENT_NAMES,
    _HOLDER_WORDS,
    _MODEL_PREFIXES,
    LLM_MODULES,
    _assigned,
    _body_nodes,
    _holds_a_model,
    _names_a_model,
    _only_import_errors,
)
from agentguard.inspect.project.python_handlers import handler_texts
from agentguard.inspect.project.python_import_needles import (
    may_import,
    spelled_in_code,
    spelled_non_ascii,
)

# what a file must spell for _imports_llm to be true: a qualname that starts with `google.genai`
# comes of an import of `google` that names `genai` (`from google import genai`); the
# others of an import whose module's first name starts with the library's name
_LLM_ROOTS = tuple(m.encode() for m in LLM_MODULES if "." not in m)
_LLM_DOTTED = tuple(tuple(p.encode() for p in m.split(".")) for m in LLM_MODULES if "." in m)

# What a handler's text must hold for fallback_sites to see a switch in it, lower-cased: a
# name with a holder word (a `model=` keyword, a holder assigned, an argument named for a
# model) or the start of a model's name in a string. A backslash (an escape) or two
# adjacent strings (implicit concatenation) may spell a model's name in a way this does not
# see, so they count too. A client class is not read here (see above).
_SWITCH_NEEDLE = re.compile(
    "|".join((*_HOLDER_WORDS, _MODEL_PREFIXES, r"\\", r"[\"'][ \t\r\n]*[rbuf]{0,2}[\"']")).encode()
)
_CLIENT_BYTES = tuple(n.encode() for n in sorted(_CLIENT_NAMES))
# a handler that catches import errors alone, written on its `except` line as
# _only_import_errors reads it (`except (ImportError, ModuleNotFoundError) as e:`): an
# optional-import guard, which fallback_sites never reads (any other spelling is read)
_IMPORT_GUARD = re.compile(
    rb"except[ \t]*(?P<p>\([ \t]*)?(?:ImportError|ModuleNotFoundError)"
    rb"(?:[ \t]*,[ \t]*(?:ImportError|ModuleNotFoundError))*(?(p)[ \t]*,?[ \t]*\))"
    rb"[ \t]*(?:as[ \t]+\w+[ \t]*)?:"
)
_MODEL_KEYWORDS = frozenset({"model", "model_name", "fallback_model"})
_MODEL_KEYS = frozenset({"model", "model_name"})
_INDENT = re.compile(rb"[ \t\f]*")
_NON_ASCII = re.compile(rb"[\x80-\xff]+")
_READ_BUDGET = 4  # handlers' text read, in file sizes, before the file is parsed instead


def _may_import_llm(data: bytes) -> bool:
    return may_import(data, prefixes=_LLM_ROOTS) or any(
        may_import(data, (root,)) and all(p in data for p in rest) for root, *rest in _LLM_DOTTED
    )


def may_switch_model(data: bytes) -> bool:
    """False only when no ``except`` handler of the file can yield a fallback site (such a
    file need not be parsed for fallbacks), nor a file that cannot import an LLM client
    library at its module level (:func:`~.python_fallback._imports_llm`)."""
    if not _may_import_llm(data):
        return False
    texts = (t for t in handler_texts(data) if _IMPORT_GUARD.match(t) is None)
    first = next(texts, None)
    if first is None:
        return False
    # (a client's qualname ends with the class's own name, which only an import or an
    # attribute spells: code, never a string nor a comment; or a name of other characters
    # in code that Python reads as it, NFKC-normalised: fullwidth letters spell `OpenAI`)
    clients = (
        any(n in data for n in _CLIENT_BYTES)
        and spelled_in_code(data, _CLIENT_BYTES, whole=True)  # (`OpenAIResponsesModel`: no)
    ) or spelled_non_ascii(data)
    # One handler's text is read on to its end, or to the file's where that cannot be told
    # (an `except` in a string): texts that overlap may add up to the file's size squared
    # (8,000 `except (` lines in a 72 KB string: 50 s). Past a few times the file's size
    # read, the file is parsed instead (one pass): "maybe". Taken one at a time, lazily.
    budget = _READ_BUDGET * len(data) + 65536
    for text in itertools.chain((first,), texts):
        budget -= len(text)
        if budget < 0:
            return True
        if (
            clients or _SWITCH_NEEDLE.search(text.lower()) or _NON_ASCII.search(text)
        ) and handler_may_switch(text, clients=clients):
            return True
    return False


def handler_may_switch(text: bytes, *, clients: bool) -> bool:
    """Whether the handler whose text (from its ``except`` line, indentation included)
    is ``text`` may switch model or client; ``clients``: the file spells a client class in
    code, so a call by a bare name may construct one. True when the text does not parse
    alone as one handler."""
    indent = _INDENT.match(text)
    lead = indent.group() if indent else b""
    # the handler after a `try` of its own indentation (inside `if 1:` when indented)
    source = (b"if 1:\n" + lead + b"try: pass\n" + text) if lead else (b"try: pass\n" + text)
    try:
        with warnings.catch_warnings():  # (the project's own warnings: bad escapes)
            warnings.simplefilter("ignore")
            tree = ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return True
    stmt: ast.stmt | None = tree.body[0] if len(tree.body) == 1 else None
    if lead and isinstance(stmt, ast.If) and len(stmt.body) == 1:
        stmt = stmt.body[0]
    handlers = _handlers(stmt)
    if handlers is None or len(handlers) != 1:
        return True  # (not the one handler the text was taken for)
    handler = handlers[0]
    if _only_import_errors(handler):
        return False  # an optional-import guard, which fallback_sites never reads
    return any(_may_switch(node, clients) for node in _body_nodes(handler.body))


if sys.version_info >= (3, 11):

    def _handlers(stmt: ast.stmt | None) -> list[ast.ExceptHandler] | None:
        """The handlers of a ``try`` (``except*`` too), None for any other statement."""
        return stmt.handlers if isinstance(stmt, ast.Try | ast.TryStar) else None

else:  # (no ``except*`` before Python 3.11: ast has no TryStar)

    def _handlers(stmt: ast.stmt | None) -> list[ast.ExceptHandler] | None:
        """The handlers of a ``try``, None for any other statement."""
        return stmt.handlers if isinstance(stmt, ast.Try) else None


def _may_switch(node: ast.AST, clients: bool) -> bool:
    """A node of a handler's body that fallback_sites may read as a switch."""
    if isinstance(node, ast.Dict):
        return any(isinstance(k, ast.Constant) and k.value in _MODEL_KEYS for k in node.keys)
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in _CLIENT_NAMES:
            return True  # (an attribute's qualname ends with its own name)
        if isinstance(func, ast.Name) and clients:
            return True  # (a bare name's qualname is that of what the file bound to it)
        return any(kw.arg in _MODEL_KEYWORDS for kw in node.keywords) or any(
            _names_a_model(a) for a in node.args
        )
    targets, value = _assigned(node)
    if value is None or (isinstance(value, ast.Constant) and not isinstance(value.value, str)):
        return False
    for t in targets:
        name = t.id if isinstance(t, ast.Name) else t.attr if isinstance(t, ast.Attribute) else ""
        if _holds_a_model(name):
            return True
    return False
