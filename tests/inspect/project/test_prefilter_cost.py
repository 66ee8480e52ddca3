"""What the pre-filters cost, and that each cheaper test answers as the one it replaced.

Modelled on the field: pydantic-ai's 180 MB of test cassettes and models (a ``claude``
command-line search opened with an alternation, tried at every byte: 2.4 s), crewAI's
1,000 tool modules that name the ``crewai`` module but never enable code execution (each
parsed for a grant it cannot hold), and openai-agents-python's SDK modules that spell
``computer_`` but hand no tool type to a model.
"""

from __future__ import annotations

import time

from hypothesis import given, settings
from hypothesis import strategies as st

from agentguard.inspect.project import cli_flags, engine_cli, needles, python_api_tools
from agentguard.inspect.project.python_agents import Wanted, analyse_python

_PIECES = st.sampled_from(
    [
        "claude", "claude_args:", "codex", "gemini", "@openai/codex", "@google/gemini-cli",
        " ", "\n", "\t", "\v", '"', "'", "`", "[", "]", "(", ")", "/", ";", "&", "|", "=", ",",
        "_", "-", "x", "1", "é", "_harness.cjs", "@anthropic-ai/", "-code", "anthropic-ai/",
    ]
)  # fmt: skip


@settings(max_examples=600, deadline=None)
@given(st.lists(_PIECES, max_size=12))
def test_the_command_searches_answer_as_their_patterns(pieces: list[str]) -> None:
    data = "".join(pieces).encode()
    harness = b"claude" + needles.HARNESS_TAIL in data  # (gh-aw's harness, read as a use)
    assert cli_flags.has_cli_use(data) == (harness or cli_flags._COMMAND.search(data) is not None)
    assert engine_cli.has_engine_cli_use(data) == (engine_cli._COMMAND.search(data) is not None)


def _best(fn: object, data: bytes) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        fn(data)  # type: ignore[operator]
        best = min(best, time.perf_counter() - start)
    return best


def test_the_command_searches_cost_about_a_pass_over_the_bytes() -> None:
    # 8 MB of cassette-like text that names the engines but never as a command
    line = b'{"model": "claude-3-5-sonnet", "note": "xcodex geminix", "text": "%s"}\n' % (
        b"lorem ipsum dolor sit amet " * 40
    )
    data = line * (8_000_000 // len(line))
    floor = _best(bytes.lower, data)  # one pass over the bytes, the yardstick
    assert not cli_flags.has_cli_use(data) and not engine_cli.has_engine_cli_use(data)
    # (the patterns took 20-30 passes: an alternation tried at every byte; these take 1-2)
    assert _best(cli_flags.has_cli_use, data) < 10 * floor
    assert _best(engine_cli.has_engine_cli_use, data) < 10 * floor


def test_a_claude_on_every_line_costs_a_few_passes_over_the_bytes() -> None:
    # 8 MB of recorded exchanges that name a Claude model on each short line (pydantic-ai's
    # cassettes): a Python loop over each ``claude`` took about 40 passes; the search runs
    # in the regex engine from one occurrence to the next (about 4)
    line = b'{"model": "claude-3-5-sonnet", "id": "msg_01"}\n'
    data = line * (8_000_000 // len(line))
    floor = _best(bytes.lower, data)
    assert not cli_flags.has_cli_use(data)
    assert _best(cli_flags.has_cli_use, data) < 15 * floor
    # a use after them all is still found
    assert cli_flags.has_cli_use(data + b"run: claude -p hi\n")


CREW_TOOL = b"""\
from crewai.tools import BaseTool
from crewai import Agent


class SearchTool(BaseTool):
    name: str = "search"

    def _run(self, query: str) -> str:
        return query


researcher = Agent(role="r", goal="g", backstory="b", tools=[SearchTool()])
"""


def test_a_crewai_module_that_never_enables_code_execution_is_not_parsed() -> None:
    tool_module = CREW_TOOL.split(b"\n\n\nresearcher")[0]  # (a tool, no agent defined)
    assert not Wanted.of(tool_module).any()
    assert not analyse_python("tools/search.py", tool_module).parsed
    # the agent it defines is read for the map alone: no risk reader wants the file
    assert Wanted.of(CREW_TOOL) == Wanted(False, False, False, False, False, False, True)
    got = analyse_python("tools/search.py", CREW_TOOL)
    assert got.grants == [] and [(d.label, d.line) for d in got.definitions] == [("Agent(...)", 12)]
    unsafe = CREW_TOOL.replace(
        b"tools=[SearchTool()])",
        b'allow_code_execution=True, code_execution_mode="unsafe")',
    )
    got = analyse_python("crew.py", unsafe)
    assert got.parsed and [g.tool for g in got.grants] == ["Agent(code_execution_mode='unsafe')"]


SDK_MODULE = b"""\
from openai import OpenAI
from .computer_action import computer_action_map


def convert(tool):
    if tool.kind == "computer_use_preview":
        return {"type": "computer_use_preview", "display_width": tool.width}
    return {"type": "function", "name": tool.name}


client = OpenAI()
tools = [{"type": "function", "name": "x"}]
"""


def test_a_file_whose_dicts_name_no_tool_type_is_not_walked_for_one(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    walked: list[object] = []
    real = python_api_tools._handed_over
    monkeypatch.setattr(python_api_tools, "_handed_over", lambda t: walked.append(t) or real(t))
    plain = SDK_MODULE.replace(b'"computer_use_preview", "display', b'"mode", "display')
    assert analyse_python("agents/convert.py", plain).grants == []
    assert walked == []  # no dict literal says `"type": "<a tool type>"`: nothing to look for
    # the converter that spells one is read (and its dispatch on the caller's choice kept)
    assert analyse_python("agents/convert.py", SDK_MODULE).grants == []
    assert len(walked) == 1
    handed = SDK_MODULE + b'client.responses.create(tools=[{"type": "local_shell"}])\n'
    got = analyse_python("loop.py", handed).grants
    assert [(g.tool, g.line) for g in got] == [("local_shell", 13)]


def test_the_tool_decoration_search_is_linear_on_hostile_imports() -> None:
    """A file that decorates `@a.tool` and opens a parenthesised import on each of its
    200,000 lines (never closed), one 4 MB parenthesis, a million comments holding a
    parenthesis, or 2 MB of backslashes: each import's span ends at the next parenthesis
    outside a comment, or at its logical line's end, so no byte is searched twice."""
    from agentguard.inspect.project.python_tool_needle import may_decorate_elsewhere

    for imported in (
        b"from .agent import (\n    agent,\n)\n",
        b"from .agent import (  # noqa: F401 (re-export)\n    agent,\n)\n",
        b"from .agent import \\\n    agent\n",
    ):
        assert may_decorate_elsewhere(imported + b"\n@agent.tool\ndef f(): ...\n")
    for data in (
        b"@a.tool\n" + b"from x import (aaaa\n" * 200_000,
        b"@a.tool\nfrom x import (" + b"z" * 4_000_000,
        b"@a.tool\nfrom x import (" + b"#(\n" * 1_000_000,  # comments read whole
        b"@a.tool\nimport " + b"\\" * 2_000_000,  # backslashes, each with its byte
    ):
        floor = _best(bytes.lower, data)
        assert not may_decorate_elsewhere(data)
        # (a quadratic search of a 4 MB file takes minutes: 1,000 times a pass over its
        # bytes is far from it and far from a loaded machine's noise)
        assert _best(may_decorate_elsewhere, data) < 1000 * floor


def test_the_command_line_reader_is_linear_in_command_lines_and_bytes() -> None:
    """4,000 `claude -p` lines (a manifest of that many containers) above 4 MB of other
    lines: the reader asked, for each command line it read, whether the whole file named
    `awf` (gh-aw's firewall): 4,000 searches of 4 MB (a generated Kubernetes manifest of
    25,000 such containers held `map` 53 s in that one search). Once per file now."""
    data = b"command: [claude, -p]\n" * 4_000 + b"# filler line of the manifest\n" * 140_000

    def split(d: bytes) -> object:
        return d.decode("utf-8", "replace").splitlines()

    floor = _best(split, data)
    assert len(cli_flags.cli_configs("m.yaml", data)) == 4_000
    assert _best(lambda d: cli_flags.cli_configs("m.yaml", d), data) < 60 * floor  # (was 1,500)
