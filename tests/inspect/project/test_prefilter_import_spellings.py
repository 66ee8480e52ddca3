"""Import and decorator spellings Python reads that the byte pre-filters rule out (each a
file counted and never parsed while the reader it guards finds something there)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from agentguard.inspect.project.files import process_file
from agentguard.inspect.project.python_prefilter import python_may_matter
from agentguard.inspect.project.python_tool_needle import may_decorate_elsewhere
from tests.inspect.project.prefilter_support import full, read_whole

_FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
_HARNESS = (
    _FIXTURES
    / "AG301/fail/harness-container-credited/python/packages/agbench/src/agbench/run_cmd.py"
)
_SHELL_TOOLS = _FIXTURES / "map_tool_imports/app/shell_tools.py"


@pytest.mark.parametrize(
    "comment",
    [
        pytest.param(b"# usage: python -m import \\\n", id="import-then-a-backslash"),
        pytest.param(b"x = 1  # no reimport\\\n", id="reimport-then-a-backslash"),
    ],
)
def test_an_import_after_a_comment_ending_in_import_and_a_backslash_is_parsed(
    comment: bytes,
) -> None:
    """A backslash ending a comment continues nothing in Python, but the first byte test's
    import list reads it as a continuation: the list the comment's `import` starts takes
    the next line's `import agents` whole, as one name (`import agents`), and the search
    resumes after it, so the real import is never seen."""
    source = (
        comment + b"import agents\nShellTool = agents.ShellTool\nT = ShellTool(executor=None)\n"
    )
    compile(source, "lib.py", "exec")
    out = process_file("lib.py", "python", source)
    assert out.parsed == 1 and [g.tool for g in out.grants] == ["ShellTool"]


def test_a_docker_import_after_a_comment_ending_in_import_and_a_backslash_is_read() -> None:
    # (the same hole in the Docker import test: agbench's harness, its import so preceded)
    original = _HARNESS.read_bytes()
    source = original.replace(b"import docker\n", b"# see import \\\nimport docker\n", 1)
    assert source != original
    assert read_whole("run_cmd.py", source).harnesses
    assert python_may_matter(source)


_FALLBACK = b"""
def ask(client, prompt):
    try:
        return client.generate(model="gemini-2.5-pro", prompt=prompt)
    except Exception:
        return client.generate(model="gemini-2.5-flash", prompt=prompt)
"""


@pytest.mark.parametrize(
    "head",
    [
        pytest.param(b"from google import genai\n", id="from-google-import-genai"),
        pytest.param(b"from google import generativeai as genai\n", id="generativeai"),
        pytest.param(b"from google . genai import types\n", id="blanks-around-the-dot"),
        pytest.param(b"from google.\\\n  genai import types\n", id="continued-after-the-dot"),
    ],
)
def test_a_google_genai_import_spelled_apart_is_parsed(head: bytes) -> None:
    """`google.genai` is a dotted name: the first byte test looks for the bytes
    `google.genai` after `from`, but Python (and the fallback reader) also takes
    `from google import genai` (the SDK's own spelling) and blanks around the dot."""
    source = head + _FALLBACK
    compile(source, "lib.py", "exec")
    out = process_file("lib.py", "python", source)
    assert out.parsed == 1 and out.fallbacks


@pytest.mark.parametrize(
    "respell",
    [
        pytest.param(
            lambda s: s.replace(b"@agent.tool_plain", b"@(agent).tool_plain"), id="parens-closed"
        ),
        pytest.param(
            lambda s: s.replace(b"@agent.tool_plain", b"@\x0cagent.tool_plain"), id="ff-after-at"
        ),
        pytest.param(
            lambda s: s.replace(b"@agent.tool_plain", b"@\\\nagent.tool_plain"),
            id="continued-after-at",
        ),
        pytest.param(
            lambda s: s.replace(b"from .agent import", b"from . agent import"), id="from-dot-blank"
        ),
        pytest.param(
            lambda s: s.replace(b"from .agent import", b"from \\\n    .agent import"),
            id="continued-after-from",
        ),
        pytest.param(
            lambda s: s.replace(b"from .agent import", b"from\x0c.agent import"), id="ff-after-from"
        ),
        pytest.param(
            lambda s: s.replace(b"from .agent import agent", b"x = 1; from .agent import agent"),
            id="after-a-semicolon",
        ),
        pytest.param(
            lambda s: s.replace(
                b"from .agent import agent",
                b"try: from .agent import agent\nexcept ImportError: raise",
            ),
            id="after-try-colon",
        ),
        pytest.param(
            lambda s: s.replace(b"from .agent import agent", b"from .agent import(agent)"),
            id="no-blank-before-the-bracket",
        ),
        pytest.param(
            lambda s: s.replace(b"from .agent import agent", b"from .agent import\\\n agent"),
            id="continued-after-import",
        ),
        pytest.param(
            lambda s: s.replace(b"from .agent import agent", b"from .agent import\x0cagent"),
            id="ff-after-import",
        ),
        pytest.param(
            lambda s: s.replace(
                b"from .agent import agent", b"from .agent import agent as " + b"a" * 90
            ).replace(b"@agent.", b"@" + b"a" * 90 + b"."),
            id="an-owner-of-90-letters",
        ),
        pytest.param(
            lambda s: s.replace(
                b"from .agent import agent", "from .agent import agent as agént".encode()
            ).replace(b"@agent.", "@agént.".encode()),
            id="a-non-ascii-owner",
        ),
    ],
)
def test_a_tool_decorated_onto_an_imported_agent_spelled_as_python_reads_it_is_read(
    respell: Callable[[bytes], bytes],
) -> None:
    """The map's tools decorated onto an agent another module makes, the decorator or the
    import spelled as Python also reads them: `@(agent).tool_plain` (the bracket closed
    before the dot), a form feed or a continuation after `@` or `from`, blanks inside the
    relative module's name, the import after a `;` or a compound statement's colon, no
    blank or another blank after `import`, or an owner named past 81 bytes or not in ASCII."""
    source = respell(_SHELL_TOOLS.read_bytes())
    compile(source, "shell_tools.py", "exec")
    got = full("app/shell_tools.py", source)
    assert sorted(d.tool.name for d in got.tool_decorations if d.owners == (".agent.agent",)) == [
        "run",
        "today",
    ]
    assert may_decorate_elsewhere(source)
    read_whole("app/shell_tools.py", source)  # (the pre-filtered reading finds the same)


def test_the_fixture_holds_what_the_respellings_replace() -> None:
    text = _SHELL_TOOLS.read_bytes()
    assert b"@agent.tool_plain" in text and b"from .agent import agent" in text
