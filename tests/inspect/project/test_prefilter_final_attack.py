"""Spellings and inputs the byte pre-filters still get wrong after the third attack's fixes:
each a file counted and never parsed while the reader it guards finds something there, or
a search that takes time beyond the file's length."""

from __future__ import annotations

import time
from pathlib import Path

from agentguard.inspect.project.files import process_file
from agentguard.inspect.project.python_prefilter import python_may_matter
from agentguard.inspect.project.python_tool_needle import may_decorate_elsewhere
from tests.inspect.project.prefilter_support import full

_SHELL_TOOLS = Path(__file__).resolve().parents[2] / "fixtures/map_tool_imports/app/shell_tools.py"

_FALLBACK = b"""
def ask(client, prompt):
    try:
        return client.generate(model="gemini-2.5-pro", prompt=prompt)
    except Exception:
        return client.generate(model="gemini-2.5-flash", prompt=prompt)
"""


def test_an_aliased_import_after_a_comment_ending_in_import_and_a_backslash_is_parsed() -> None:
    """The comment's `import \\` list runs the next line in; its name `import agents as ag`
    neither starts with a module nor ends with one (its last word is the alias)."""
    source = b"# usage: import \\\nimport agents as ag\nShellTool = ag.ShellTool\n"
    source += b"T = ShellTool(executor=None)\n"
    compile(source, "lib.py", "exec")
    assert full("lib.py", source).grants
    out = process_file("lib.py", "python", source)
    assert out.parsed == 1 and [g.tool for g in out.grants] == ["ShellTool"]


def test_a_dotted_import_continued_after_its_dot_is_parsed() -> None:
    """`import google.\\<newline> genai as g`: the continuation becomes a comma before the
    blanks around the dot are dropped, so `google.` and `genai as g` are read apart."""
    source = b"import google.\\\n    genai as g\nc = g.Client()\n" + _FALLBACK
    compile(source, "lib.py", "exec")
    assert full("lib.py", source).fallbacks
    out = process_file("lib.py", "python", source)
    assert out.parsed == 1 and out.fallbacks


def test_many_froms_of_a_dotted_modules_package_take_linear_time() -> None:
    """Each `from google` match searches the whole file for `genai`/`generativeai`: time
    quadratic in the file (`from google\\n` on 960 KB took 54 s)."""
    data = b"from google\n" * 20_000  # (240 KB)
    start = time.perf_counter()
    python_may_matter(data)
    assert time.perf_counter() - start < 1.0


def test_a_tool_decorated_through_a_bracket_holding_a_comment_is_found() -> None:
    """`@(agent  # ...<newline>).tool_plain`: Python reads a comment inside the brackets,
    the decorator test reads only blanks and `)` between the owner and the dot."""
    original = _SHELL_TOOLS.read_bytes()
    source = original.replace(b"@agent.tool_plain", b"@(agent  # the agent\n).tool_plain")
    assert source != original
    compile(source, "shell_tools.py", "exec")
    assert full("app/shell_tools.py", source).tool_decorations
    assert may_decorate_elsewhere(source)
