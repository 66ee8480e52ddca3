"""The import test of the second-stage pre-filters (``python_import_needles.may_import``).

A reader that finds nothing without an import of its framework skips a file whose only
mention of the framework is prose (a docstring's example, a model name in a string); a file
that imports it in any form Python allows (an alias, a list of modules, a backslash
continuation, a dotted module) is still parsed, and what the full reading finds, the
pre-filtered one finds too.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from agentguard.inspect.project.files import process_file
from agentguard.inspect.project.python_agents import PythonFacts, Wanted, analyse_python
from agentguard.inspect.project.python_import_needles import may_import
from tests.inspect.project.prefilter_support import HARNESS, read_whole
from tests.inspect.project.prefilter_support import facts as _facts


def _same_as_full(source: bytes) -> PythonFacts:
    got = analyse_python("agent.py", source)
    full = analyse_python("agent.py", source, wanted=Wanted.every(source))
    assert _facts(got) == _facts(full)
    return got


@pytest.mark.parametrize(
    "imports",
    [
        pytest.param("import agents as a\nShellTool = a.ShellTool", id="import-as"),
        pytest.param("from agents import ShellTool as Shell\nShellTool = Shell", id="name-as"),
        pytest.param("import os, json as j, agents\nShellTool = agents.ShellTool", id="a-list"),
        pytest.param("from \\\n    agents import ShellTool", id="backslash-after-from"),
        pytest.param("import os, \\\n  agents\nShellTool = agents.ShellTool", id="backslash-list"),
        pytest.param("from agents.tool import ShellTool", id="a-submodule"),
        pytest.param("if True:\n    from\tagents import ShellTool", id="indented-tab"),
        pytest.param("import os; from agents import ShellTool", id="after-a-semicolon"),
    ],
)
def test_a_grant_reached_through_any_import_form_is_found(imports: str) -> None:
    # (`import openai` lets the file through the first pre-filter whatever the form below)
    source = f"import openai\n{imports}\n\ntool = ShellTool(executor=run)\n".encode()
    got = _same_as_full(source)
    assert got.parsed and [g.tool for g in got.grants] == ["ShellTool"], got.grants


def test_a_fallback_through_from_google_import_genai_is_found() -> None:
    # `google.genai` is a qualname the file spells as `google` and `genai` apart
    source = textwrap.dedent(
        """\
        from google import genai as g

        def ask(client, prompt):
            try:
                return client.generate(model="gemini-2.5-pro", prompt=prompt)
            except Exception:
                return client.generate(model="gemini-2.5-flash", prompt=prompt)
        """
    ).encode()
    assert _same_as_full(source).fallbacks


def test_a_fallback_beside_an_optional_import_guard_is_found() -> None:
    source = textwrap.dedent(
        """\
        try:
            import openai
        except ImportError:
            openai = None

        def ask(client):
            try:
                return client.create(model="gpt-4o")
            except openai.APIError:
                return client.create(model="gpt-4o-mini")
        """
    ).encode()
    assert [f.line for f in _same_as_full(source).fallbacks] == [9]


def test_an_mcp_server_given_by_keyword_across_lines_is_found() -> None:
    source = textwrap.dedent(
        """\
        from mcp import StdioServerParameters

        params = StdioServerParameters(
            command  # the launcher
            = "npx",
            args=["-y", "@modelcontextprotocol/server-filesystem", "/"],
        )
        """
    ).encode()
    got = _same_as_full(source)
    assert [s.command for s in got.mcp_servers] == ["npx"]


@pytest.mark.parametrize(
    "key",
    [
        pytest.param('"comm\\x61nd"', id="hex-escape"),
        pytest.param('"\\143ommand"', id="octal-escape"),
        pytest.param('"comm\\u0061nd"', id="u-escape"),
        pytest.param('"comm\\U00000061nd"', id="U-escape"),
        pytest.param('"\\N{LATIN SMALL LETTER C}ommand"', id="named-escape"),
        pytest.param('"comm" "and"', id="two-pieces"),
        pytest.param('("co"  # the launcher\n \'mm\' r"and")', id="pieces-a-comment-between"),
        pytest.param('"comm\\\nand"', id="continued-inside"),
        pytest.param('"""comm\\x61nd"""', id="triple-quoted"),
    ],
)
def test_an_mcp_servers_command_key_spelled_by_escapes_or_pieces_is_found(key: str) -> None:
    """A pull request's mapping whose `command` key Python reads from escapes or joins from
    pieces (no `command` bytes in the file) declares its server all the same: the byte test
    took the file for one that declares none, and the server was never reported."""
    source = (
        "import mcp\n"
        f'SERVERS = {{"evil": {{{key}: "npx", "args": ["-y", "server-filesystem", "/"]}}}}\n'
    ).encode()
    assert eval(key) == "command"  # (what Python reads)
    got = _same_as_full(source)
    assert [s.command for s in got.mcp_servers] == ["npx"], source


@pytest.mark.parametrize(
    "source",
    [
        b"import mcp\nx = '" + b"\\N{" * 200_000 + b"'\n",
        b"import mcp\nx = 'c" + b"' '" * 200_000 + b"'\n",
        b"import mcp\nx = " + b"'c' " * 200_000 + b"\n",
    ],
    ids=["named-escapes-never-closed", "empty-pieces-after-a-c", "many-one-letter-pieces"],
)
def test_the_mcp_key_test_is_linear_on_a_hostile_file(source: bytes) -> None:
    """Each place the key test starts from reads a bounded stretch (a named character's
    name is at most 100 characters): a 600 KB line of `\\N{` takes milliseconds, not the
    quadratic minutes of reading each one to the line's end."""
    import time

    from agentguard.inspect.project.python_mcp_servers import may_declare_servers

    started = time.perf_counter()
    may_declare_servers(source)
    assert time.perf_counter() - started < 2.0  # (about 0.02 s)


@pytest.mark.parametrize(
    "source",
    [
        b"import mcp\nx = 1  #" + b"c' #" * 12_000 + b"\n",
        b"import mcp\n" + b"#c' \n" * 8_000,
        b"import mcp\n#" + b"command #" * 8_000 + b"\n",
    ],
    ids=["a-comment-after-each-quoted-c", "a-line-of-comment-after-each", "keyword-then-comment"],
)
def test_the_mcp_key_test_is_linear_on_a_comment_that_holds_many_starts(source: bytes) -> None:
    """A comment is a gap between two pieces (and between `command` and `=`), and a gap
    runs over the lines of comments after it: from each `c'` (each `command`) of a comment,
    the key test read on to the end of the line or of the file before it failed, so a
    file of 50 KB took seconds and one of 200 KB minutes (quadratic), before any parse."""
    import time

    from agentguard.inspect.project.python_mcp_servers import may_declare_servers

    started = time.perf_counter()
    may_declare_servers(source)
    assert time.perf_counter() - started < 2.0


@pytest.mark.parametrize(
    ("old", "new"),
    [
        pytest.param(b"import os\n", b"import sys, docker as d, os\n", id="an-import-list"),
        pytest.param(b"containers.run(", b"containers .run (", id="blanks-around-the-dot"),
        pytest.param(b"containers.run(", b"containers\\\n    .run(", id="a-continuation"),
        pytest.param(b"containers.run(", b"containers.\\\n  run(", id="after-the-dot"),
    ],
)
def test_a_docker_harness_spelled_another_way_python_reads_is_read(old: bytes, new: bytes) -> None:
    """agbench's harness (it imports the Docker SDK and no agent module, and starts the
    benchmark's container) with its import or its start spelled as Python also reads them:
    the byte tests took `containers.run(` and a line `import docker` for the only spellings,
    and such a file was counted and never parsed."""
    from agentguard.inspect.project.python_prefilter import python_may_matter

    original = HARNESS.read_bytes()
    source = original.replace(old, new)
    if old == b"import os\n":  # (the import list in place of its own line; lines kept)
        source = source.replace(b"import docker\n", b"\n").replace(
            b"docker.from_env", b"d.from_env"
        )
    assert source != original and python_may_matter(source)
    got = read_whole("run_cmd.py", source)
    assert got.harnesses and [h.line for h in got.harnesses] == [
        h.line for h in read_whole("run_cmd.py", original).harnesses
    ]


_SHELL_TOOLS = Path(__file__).resolve().parents[2] / "fixtures/map_tool_imports/app/shell_tools.py"


@pytest.mark.parametrize(
    "respell",
    [
        pytest.param(
            lambda s: s.replace(b"@agent.tool_plain", b"@(agent\n .tool_plain)"), id="parens"
        ),
        pytest.param(lambda s: s.replace(b"@agent.tool_plain", b"@agent .tool_plain"), id="blank"),
        pytest.param(
            lambda s: b"".join(b"@d%d.tool\ndef f%d(): ...\n" % (i, i) for i in range(21)) + s,
            id="21-other-owners-first",
        ),
    ],
)
def test_a_tool_decorated_onto_an_imported_agent_spelled_another_way_is_read(
    respell: Callable[[bytes], bytes],
) -> None:
    """The map's tools decorated onto an agent another module makes (`from .agent import
    agent`, then `@agent.tool_plain`), the decorator spelled as Python also reads it, or
    after 21 decorators of other owners (the test looks up 20 owners: past that it said
    no, and the file was never parsed)."""
    from agentguard.inspect.project.python_tool_needle import may_decorate_elsewhere

    source = respell(_SHELL_TOOLS.read_bytes())
    assert may_decorate_elsewhere(source)
    got = read_whole("app/shell_tools.py", source)
    assert sorted(d.tool.name for d in got.tool_decorations if d.owners == (".agent.agent",)) == [
        "run",
        "today",
    ]


# -- what is not parsed ------------------------------------------------------------------

# (an import written in a docstring counts: only prose and strings do not)
_LIBRARY_MODULE = textwrap.dedent(
    '''\
    """Tools of this library, for agents, like the ShellTool of the openai-agents package.
    Its MCP servers take a command and args (see the crewai and langchain docs)."""
    from openai import AsyncOpenAI  # (through the first pre-filter)

    try:
        from anthropic import Anthropic
    except ImportError as _import_error:
        raise ImportError("install anthropic") from _import_error


    class WebSearchTool:
        """Like the agents, tools, and ShellTool of other frameworks."""

        def run(self, model: str = "command-r") -> None:
            self.mcp_commands = [model]
    '''
).encode()


def test_a_file_that_only_names_frameworks_in_prose_is_not_parsed() -> None:
    wanted = Wanted.of(_LIBRARY_MODULE)
    assert not wanted.any(), wanted
    full = analyse_python("lib.py", _LIBRARY_MODULE, wanted=Wanted.every(_LIBRARY_MODULE))
    assert not any(_facts(full).values())  # the full reading finds nothing either
    out = process_file("lib.py", "python", _LIBRARY_MODULE)
    assert out.parsed == 0 and not out.sources  # the parse counter and no parsed source


def test_the_same_file_is_parsed_once_it_imports_a_framework() -> None:
    source = _LIBRARY_MODULE + b"\nfrom agents import ShellTool\nT = ShellTool(executor=None)\n"
    out = process_file("lib.py", "python", source)
    assert out.parsed == 1 and [g.tool for g in out.grants] == ["ShellTool"]


@pytest.mark.parametrize(
    "head",
    [
        pytest.param(b"from \\\n    agents import ShellTool\n", id="continued-after-from"),
        pytest.param(b"import os, \\\r\n    agents\nShellTool = agents.ShellTool\n", id="list"),
        pytest.param(b"from\x0cagents import ShellTool\n", id="a-form-feed"),
    ],
)
def test_an_import_spelled_with_pythons_other_blanks_is_parsed(head: bytes) -> None:
    """A backslash continuation or a form feed between `from`/`import` and the module is a
    blank to Python: the first byte test took only spaces and tabs, and such a file (no
    other watched import, no `claude`) was counted and never parsed."""
    out = process_file("lib.py", "python", head + b"T = ShellTool(executor=None)\n")
    assert out.parsed == 1 and [g.tool for g in out.grants] == ["ShellTool"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (b"import agents", True),
        (b"import os as o, agents.x", True),
        (b"from agents import A", True),
        (b"from \\\r\nagents import A", True),
        (b"import smolagents", False),  # (another root: `agents` is not it)
        (b"import agents_extra", False),
        (b"build agents, tools", False),
        (b"x = [tools, agents]", False),
        (b"# see agents", False),
    ],
)
def test_may_import_reads_the_root_of_an_import(text: bytes, expected: bool) -> None:
    assert may_import(text, (b"agents",)) is expected
    assert may_import(text, prefixes=(b"agents",)) is (expected or text.endswith(b"_extra"))
