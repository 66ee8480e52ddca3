"""The prose filter's attack: a way to a file's own prose that the parsed tree spells
otherwise than the source (an f-string's text as written, a name as Python folds it)."""

from __future__ import annotations

import textwrap

import pytest

from agentguard.inspect.project.cli_flags import cli_configs

_RUN = '"""claude -p go --dangerously-skip-permissions"""\n'
_BYPASS = [(1, {"permission_mode": "bypassPermissions"})]


def _read(path: str, text: str) -> list[tuple[int, dict[str, object]]]:
    data = textwrap.dedent(text).encode()
    return [(c.line, {k: o.value for k, o in c.options.items()}) for c in cli_configs(path, data)]


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
    assert _read(f"{where}.py", _RUN + _F_STRING_AS_WRITTEN[where]) == _BYPASS
    inert = _F_STRING_AS_WRITTEN[where].replace("open", "spam")
    assert _read(f"inert-{where}.py", _RUN + inert) == []


# A name Python folds (NFKC) into a way to the prose: the text spells no such word, the
# name the code runs is the word.
_FOLDED_NAME = {
    "fullwidth": 'import os\nos.system(\uff4f\uff50\uff45\uff4e("run.py").readline()[3:-4])\n',
    "ligature": "import os\nos.system(__\ufb01le__)\n",
    "modifier-letter": "\u02b0elp(print)\n",
}


@pytest.mark.parametrize("where", sorted(_FOLDED_NAME))
def test_a_name_python_folds_into_a_way_to_the_prose_keeps_it(where: str) -> None:
    assert _read(f"{where}.py", _RUN + _FOLDED_NAME[where]) == _BYPASS
    # a name that folds into no such word: the docstring is prose
    assert _read(f"inert-{where}.py", _RUN + "\uff53\uff50\uff41\uff4d = 1\n") == []
