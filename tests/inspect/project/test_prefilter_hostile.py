"""Hostile spellings against the second-stage pre-filters: a file the full reader finds a
hazard in must pass its pre-filter however the hazard is spelled (a pre-filter that says
"no" wrongly hides the hazard). Each source here is valid Python that the reader reads as a
tool type or a model switch, written so that the bytes the pre-filter looked for are not
where it looked: a tool type's name split before its first piece ends, or spelled with an
escape; a client class or a keyword spelled in letters Python normalises (NFKC) to ASCII.
"""

from __future__ import annotations

import time

import pytest

from agentguard.inspect.project.python_api_tools import may_declare
from agentguard.inspect.project.python_fallback_filter import may_switch_model
from tests.inspect.project.prefilter_support import full as _full
from tests.inspect.project.prefilter_support import read_whole
from tests.inspect.project.prefilter_support import src as _src

# -- API tool types: the name is not whole right after a quote -------------------------


@pytest.mark.parametrize(
    "literal",
    [
        "'ba' 'sh_20250124'",  # (a first piece shorter than the name)
        "'b' \\\n 'ash_20250124'",
        "'text_edito'  # the editor\n  'r_20250429'",
        "'local_' 'shell'",
        "'computer' '_use_preview'",
        "'\\x62ash_20250124'",  # (an escape before the name ends)
        "'bash\\u005f20250124'",
        "'\\N{LATIN SMALL LETTER B}ash_20250124'",
        "'\\142ash_20250124'",
        "'''\\x6cocal_shell'''",
        "'\\\nb' 'ash_20250124'",  # (a backslash-newline, then a short piece)
        "'' '\\x62' 'ash_20250124'",
    ],
)
@pytest.mark.parametrize("named", ["", "# a bash_20250124, local_shell, computer_use tool\n"])
def test_a_tool_type_spelled_in_pieces_or_escapes_passes(literal: str, named: str) -> None:
    # (`named`: the name elsewhere in the file, as the test before this one wanted it)
    source = (
        "import anthropic\nimport openai\n"
        f"{named}client = anthropic.Anthropic()\n"
        f"client.messages.create(tools=[{{'type': {literal}, 'name': 'x'}}])\n"
    ).encode()
    full = read_whole("agent.py", source)
    assert full.grants, literal
    assert may_declare(source), literal


@pytest.mark.parametrize(
    "literal",
    ["'\\x1b[0m'", "'\\x62ash'", "'\\x62ash_2025' + '0124'", "'\\u0062\\x61sh_2025x'"],
)
def test_pieces_and_escapes_that_no_tool_type_can_be_are_not_parsed_for_a_grant(
    literal: str,
) -> None:
    # (a short piece with a string after it passes: `'b' 'ar'` is read as a maybe)
    source = f"import anthropic\nx = [{{'type': {literal}}}]\n".encode()
    assert not may_declare(source), literal
    assert not _full("a.py", source).grants


# -- fallback handlers: names Python normalises ----------------------------------------


@pytest.mark.parametrize(
    "source",
    [
        # a client class imported in fullwidth letters: `Mk` is `openai.OpenAI`
        _src(
            """\
            import openai
            from openai import \uff2f\uff50\uff45\uff4e\uff21\uff29 as Mk

            def ask(q):
                try:
                    return Mk(api_key="a").chat.completions.create(messages=q)
                except Exception:  # another model's endpoint
                    c = Mk(base_url="http://backup")
                    return c.chat.completions.create(messages=q)
            """
        ),
        # ... or reached through an attribute in those letters
        _src(
            """\
            import openai
            Mk = openai.\uff2f\uff50\uff45\uff4e\uff21\uff29

            def ask(q):
                try:
                    return Mk(api_key="a").chat.completions.create(messages=q)
                except Exception:
                    return Mk(base_url="http://backup").chat.completions.create(messages=q)
            """
        ),
        # a `model=` keyword in those letters, no other word of a switch in the handler
        _src(
            """\
            import openai

            def ask(q):
                try:
                    return openai.chat.completions.create(model="gpt-4o", messages=q)
                except Exception:
                    return openai.chat.completions.create(\uff4d\uff4f\uff44\uff45\uff4c=BACKUP)
            """
        ),
    ],
)
def test_a_switch_spelled_in_letters_python_normalises_passes(source: bytes) -> None:
    full = read_whole("agent.py", source)
    assert full.fallbacks
    assert may_switch_model(source)


# -- a module named in letters Python normalises: every pre-filter -----------------------

_FULLWIDTH_SDK = _src(
    """\
    from \uff43\uff4c\uff41\uff55\uff44\uff45_agent_sdk import ClaudeAgentOptions, query

    options = ClaudeAgentOptions(permission_mode="bypassPermissions", allowed_tools=["Bash"])

    async def main():
        async for m in query(prompt="fix it", options=options):
            print(m)
    """
)


def test_a_module_imported_in_letters_python_normalises_is_read() -> None:
    from agentguard.inspect.project.files import python_may_matter, python_risk_may_matter

    full = read_whole("agent.py", _FULLWIDTH_SDK)
    assert [c.options["permission_mode"].value for c in full.configs] == ["bypassPermissions"]
    assert python_may_matter(_FULLWIDTH_SDK) and python_risk_may_matter(_FULLWIDTH_SDK)


def test_characters_that_spell_no_ascii_name_pass_no_pre_filter() -> None:
    from agentguard.inspect.project.files import python_may_matter
    from agentguard.inspect.project.python_import_needles import spelled_non_ascii

    source = _src(
        """\
        # Café, naïve, 日本語のコメント\uff1a\uff08全角の句読点\uff09
        GREETING = "¡Hola! — 🎉 1,572 km²"
        π = 3.14159  # a Greek name: read as itself
        """
    )
    assert not spelled_non_ascii(source)
    assert not python_may_matter(source)
    assert spelled_non_ascii("\uff4d\uff4f\uff44\uff45\uff4c = 1\n".encode())  # (`model`)


# -- the fallback pre-filter's cost: bounded by the file's size ---------------------------


def test_handlers_in_a_string_that_read_to_the_end_cost_no_more_than_a_parse() -> None:
    # 8,000 `except (` lines in a string: each is a handler's text to the pre-filter, read
    # on to the end of the file (an open bracket); all of them read and parsed alone took
    # 50 s and 300 MB for this 72 KB file, quadratic in its size
    source = (
        'import openai\nDOC = """\n' + "except (\n" * 8000 + '"""\n\n'
        "def ask(q):\n"
        "    try:\n"
        '        return openai.OpenAI().chat.completions.create(model="gpt-4o", messages=q)\n'
        "    except Exception:\n"
        '        return openai.OpenAI().chat.completions.create(model="gpt-4o-mini")\n'
    ).encode()
    started = time.process_time()
    assert may_switch_model(source)
    assert time.process_time() - started < 10  # (CPU time: about 0.1 s)
    read_whole("agent.py", source)


def test_a_file_of_escaped_strings_is_parsed_rather_than_each_decoded() -> None:
    # (each piece decoded costs a parse of it: past a few hundred, the file is parsed)
    # of those that stand where a `"type"` key's value can: the others are not decoded
    many = b"import anthropic\n" + b"x = {'type': '\\x41'}\n" * 300
    assert may_declare(many)
    assert not may_declare(b"import anthropic\n" + b"x = {'type': '\\x41'}\n" * 200)
    assert not _full("a.py", many).grants
    assert not may_declare(b"import anthropic\n" + b"x = '\\x41'\n" * 300)
