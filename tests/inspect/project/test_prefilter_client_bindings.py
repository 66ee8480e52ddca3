"""Bindings of a name to a client class that the full fallback reader reads and that a
byte test of where a name is bound got wrong (an attack on a pre-filter that tried to
tell a called name from a client class without parsing; it was not taken): each file
here yields a fallback site when parsed, so its pre-filtered reading must be the same
(a file the pre-filter skips hides the finding).

- a chained assignment whose later target is no name (``make = box.cls = OpenAI``): the
  value of ``make`` is the last expression, not the next target;
- a walrus whose parenthesis closes before an attribute (``(make := OpenAI).__name__``)
  or a call's (``register(make := OpenAI).x``): the value ends at the ``)``;
- an assignment followed on the next line by a statement that starts ``().``: the value
  ends at the newline;
- an annotated assignment in an indented block of a file whose lines end in a lone CR
  (or a lone CR inside an LF file): Python ends the line there, a line reader does not;
- a binding at the very start of a file that begins with a byte order mark (Python
  drops it; its bytes are not a name's).
"""

from __future__ import annotations

import pytest

from agentguard.inspect.project.python_agents import Wanted, analyse_python
from agentguard.inspect.project.python_fallback_filter import may_switch_model
from tests.inspect.project.prefilter_support import facts as _facts

_HANDLER = "\ndef ask():\n    try:\n        pass\n    except Exception:\n        make()\n"
_IMPORT = "from openai import OpenAI\n"

_SOURCES = {
    "chain through an attribute target": _IMPORT
    + "class Box:\n    pass\nbox = Box()\nmake = box.cls = OpenAI\n"
    + _HANDLER,
    "chain through a subscript target": _IMPORT
    + "slots = {}\nmake = slots['k'] = OpenAI\n"
    + _HANDLER,
    "chain of three, an attribute in the middle": _IMPORT
    + "class Box:\n    pass\nbox = Box()\nfirst = make = box.cls = OpenAI\n"
    + _HANDLER,
    "walrus, then an attribute": _IMPORT + "if (make := OpenAI).__module__:\n    pass\n" + _HANDLER,
    "walrus of a dotted name, then an attribute": "import openai\n"
    + "print((make := openai.OpenAI).__name__)\n"
    + _HANDLER,
    "walrus in a call, then an attribute": _IMPORT
    + "def register(c):\n    return c\nregister(make := OpenAI).__name__\n"
    + _HANDLER,
    "walrus of another name, then an attribute": _IMPORT
    + "other = OpenAI\nprint((make := other).__name__)\n"
    + _HANDLER,
    "assignment, then a line that starts with ().": _IMPORT
    + "make = OpenAI  # the client class\n().count(1)\n"
    + _HANDLER,
    "annotated, in a block, CR line ends": (
        _IMPORT + "if True:\n    make: type = OpenAI\n    x = 1\n" + _HANDLER
    ).replace("\n", "\r"),
    "annotated, in a class body, CR line ends": (
        _IMPORT
        + "class K:\n    make: type = OpenAI\n    y = 2\n"
        + "    try:\n        pass\n    except Exception:\n        make()\n"
    ).replace("\n", "\r"),
    "annotated, in a block, a lone CR in an LF file": _IMPORT
    + "if True:\n    make: type = OpenAI\r    x = 1\n"
    + _HANDLER,
    "assignment first after a byte order mark": "\ufeffmake = OpenAI\n" + _IMPORT + _HANDLER,
    "annotated first after a byte order mark": "\ufeffmake: type = OpenAI\n" + _IMPORT + _HANDLER,
}


@pytest.mark.parametrize("layout", sorted(_SOURCES))
def test_a_binding_the_reader_resolves_keeps_the_file_parsed(layout: str) -> None:
    source = _SOURCES[layout].encode()
    full = analyse_python("agent.py", source, wanted=Wanted.every(source))
    assert full.fallbacks, layout  # (the reader finds the handler's client call)
    assert may_switch_model(source), layout
    assert _facts(analyse_python("agent.py", source)) == _facts(full), layout
