"""The methods the dataclasses module writes for agentguard's records, compiled once.

``@dataclass`` writes the source of each method it adds (``__init__``, ``__repr__``,
``__eq__``, ``__hash__``, a frozen class's ``__setattr__``) and compiles it with
``exec``, on every start: a run of ``inspect`` makes 150 record classes and compiled 830
such functions (70 ms of its 160 ms on an empty folder; 90 ms on a large tree, most of
it before the readers are forked or after they end, where no other CPU helps).

:func:`install` gives the dataclasses module an ``exec`` of its own (a module global
shadows the builtin, which is the only name it calls it by): the same call, with the
code object compiled from the same source text under the same name and flags
(``"<string>"``, no inherited future flags), taken from a table when that text was
compiled before. The text is the key, so a record class that changes misses; nothing
else about a class (its module's globals, its defaults) is in the code object, and
those are passed to ``exec`` as before. Any other use of ``exec`` (a code object, bytes,
a text never seen) is the builtin's.

The table is a :class:`agentguard.codetable.Table` (where it is kept, when it is read and
written, what it trusts: see there); an entry that is not a code object compiled under
the name ``exec`` gives its texts is compiled anew (and not written again); a file whose
keys are not texts is ignored whole.
"""

from __future__ import annotations

import builtins
import dataclasses
import types
from typing import Any

from agentguard.codetable import Table

_NAME = "<string>"  # (what exec names a text's code: tracebacks read the same)


def _valid_key(key: object) -> bool:
    return type(key) is str


def _valid_value(value: object) -> bool:
    return type(value) is types.CodeType and value.co_filename == _NAME


_TABLE: Table[str, types.CodeType] | None = None


def install() -> None:
    """Give the dataclasses module the table's ``exec`` (once per process)."""
    global _TABLE
    if _TABLE is not None or "exec" in vars(dataclasses):
        return
    _TABLE = Table("dataclass-methods", b"2", _valid_key, _valid_value)
    dataclasses.exec = _exec  # type: ignore[attr-defined]


def _exec(source: Any, globals: Any = None, locals: Any = None, /) -> None:
    table = _TABLE
    if table is None or type(source) is not str:
        return builtins.exec(source, globals, locals)
    code = table.get(source)
    if code is None:
        code = compile(source, _NAME, "exec", dont_inherit=True)
        table.put(source, code)
    return builtins.exec(code, globals, locals)
