"""A Python file is parsed and read with the cyclic garbage collector paused (a syntax
tree's objects are all alive until the readers are done: a collection walks them and
frees nothing), and the collector is left as it was found, whatever the file did."""

from __future__ import annotations

import ast
import gc

import pytest

from agentguard.inspect.project import python_agents
from agentguard.inspect.project.files import process_file

_AGENT = b"from agents import Agent, ShellTool\n\nagent = Agent(tools=[ShellTool()])\n"


def _parse_sees(monkeypatch: pytest.MonkeyPatch, data: bytes) -> list[bool]:
    seen: list[bool] = []
    real = ast.parse

    def parse(source: bytes, filename: str = "<unknown>") -> ast.Module:
        seen.append(gc.isenabled())
        return real(source, filename=filename)

    monkeypatch.setattr(python_agents.ast, "parse", parse)
    out = process_file("agent.py", "python", data)
    monkeypatch.undo()
    assert out.grants  # (read: the file was parsed)
    return seen


def test_the_collector_is_paused_while_a_python_file_is_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert gc.isenabled()
    assert _parse_sees(monkeypatch, _AGENT) == [False]
    assert gc.isenabled()


def test_the_collector_is_left_as_it_was(monkeypatch: pytest.MonkeyPatch) -> None:
    gc.disable()
    try:
        assert _parse_sees(monkeypatch, _AGENT) == [False]
        assert not gc.isenabled()  # (not turned on by the read)
    finally:
        gc.enable()


def test_the_collector_runs_again_after_a_file_that_failed() -> None:
    out = process_file("bad.py", "python", b"from agents import Agent\nAgent(tools=[\n")
    assert [s.error_code for s in out.sources] == ["parse-error"]
    assert gc.isenabled()
