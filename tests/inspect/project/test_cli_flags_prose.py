"""A Python file's way back to its own prose keeps its docstrings read as command lines
(cli_flags._python_prose_blanked): a name in each place the grammar holds one, and what
the prose filter's attack found the parsed tree spells otherwise than the source (an
f-string's text as written, a name as Python folds it). Each case beside an inert one:
the same code naming nothing that reads prose, whose docstring is blanked."""

from __future__ import annotations

import pytest

from tests.inspect.project.test_cli_flags import _read

_RUN = '"""claude -p go --dangerously-skip-permissions"""\n'
_BYPASS = [(1, {"permission_mode": "bypassPermissions"})]


_WORDS = ("importlib", "open", "format", "help", "argv", "getattr", "vars", "globals", "locals",
          "modules")  # fmt: skip


def _keeps_its_prose(where: str, code: str, inert: str) -> None:
    assert _read(f"{where}.py", _RUN + code) == _BYPASS
    assert _read(f"inert-{where}.py", _RUN + inert) == []


def _spam(code: str) -> str:
    for word in _WORDS:
        code = code.replace(word, "spam")
    return code


# A name in each place Python's grammar holds one (the words are read off the parsed tree,
# not a second tokenizing of the file): each keeps the docstring, as a token did.
_NAMED_IN_CODE = {
    "import": "import importlib\n",
    "import-alias": "from io import open as reader\n",
    "import-module": "from importlib import util\n",
    "argument": "def f(*, open=None):\n    return open\n",
    "keyword": "dict(format=1)\n",
    "decorator": "@help\ndef f():\n    pass\n",
    "except-name": "try:\n    pass\nexcept OSError as open:\n    pass\n",
    "global": "def f():\n    global argv\n",
    "annotation": "x: getattr = None\n",
    "lambda": "f = lambda open: 0\n",
    "attribute": "import sys\nsys.modules\n",
    "class-keyword": "class C(metaclass=vars):\n    pass\n",
    "match-rest": "match {}:\n    case {**vars}:\n        pass\n",
    "match-keyword": "match 1:\n    case int(real=globals):\n        pass\n",
    "match-capture": "match 1:\n    case [*locals]:\n        pass\n",
    "f-string-text": 'x = f"open {1}"\n',
    "f-string-field-string": "x = f\"{ {'a': 1}['open'] }\"\n",
}


@pytest.mark.parametrize("where", sorted(_NAMED_IN_CODE))
def test_a_way_to_the_prose_named_anywhere_in_the_code_keeps_it(where: str) -> None:
    _keeps_its_prose(where, _NAMED_IN_CODE[where], _spam(_NAMED_IN_CODE[where]))


# An f-string's words as its source spells them (what one tokenizer token held), which the
# tree decodes away: the parts of an implicit concatenation are one constant, an escape or
# a line continuation is a character or nothing, a bytes literal in a field is no string.
_F_STRING_AS_WRITTEN = {
    "concatenated": 'x = f"a" f"open"\n',
    "escape-after": 'x = f"open\\x41"\n',
    "named-escape-before": 'x = f"\\N{DIGIT ZERO}open"\n',
    "octal-escape": 'x = f"open\\101"\n',
    "line-continuation": 'x = f"a\\\nopen"\n',
    "triple-quoted-continuation": 'x = f"""a\\\nopen"""\n',
    "field-bytes": "x = f\"{b'open'}\"\n",
    "field-concatenated": "x = f\"{'a' 'open'}\"\n",
}


@pytest.mark.parametrize("where", sorted(_F_STRING_AS_WRITTEN))
def test_an_f_string_is_searched_as_its_source_spells_it(where: str) -> None:
    _keeps_its_prose(where, _F_STRING_AS_WRITTEN[where], _spam(_F_STRING_AS_WRITTEN[where]))


# A name Python folds (NFKC) into a way to the prose: the text spells no such word, the
# name the code runs is the word.
_FOLDED_NAME = {
    "fullwidth": 'import os\nos.system(\uff4f\uff50\uff45\uff4e("run.py").readline()[3:-4])\n',
    "ligature": "import os\nos.system(__\ufb01le__)\n",
    "modifier-letter": "\u02b0elp(print)\n",
}


@pytest.mark.parametrize("where", sorted(_FOLDED_NAME))
def test_a_name_python_folds_into_a_way_to_the_prose_keeps_it(where: str) -> None:
    # (inert: a name that folds into no such word)
    _keeps_its_prose(where, _FOLDED_NAME[where], "\uff53\uff50\uff41\uff4d = 1\n")


def test_a_name_built_and_evaluated_keeps_the_prose() -> None:
    """``__doc__`` spelled in pieces and evaluated: no piece names it, ``eval`` reaches it
    (and ``exec`` of code that does); each keeps the docstring, beside a twin that calls
    another name."""
    code = 'import os\nos.system(eval("__d" + "oc__"))\n'
    _keeps_its_prose("eval-pieces", code, code.replace("eval", "spam"))
    code = 'exec("import os; os.system(__d" + "oc__)")\n'
    _keeps_its_prose("exec-pieces", code, code.replace("exec", "spam"))
