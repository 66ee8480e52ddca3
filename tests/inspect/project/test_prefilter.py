"""The byte pre-filter that decides which Python files are parsed: it may let a file
through that turns out not to matter (that only costs a parse), never the other way."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentguard.inspect.project.files import PY_MODULES, python_may_matter


def _reference(data: bytes) -> bool:
    """The rule spelled out: ``claude`` anywhere, or any ``from X`` / ``import a, X`` whose
    module X starts with one of the watched names."""
    if b"claude" in data:
        return True
    for module in re.findall(rb"from[ \t]+([\w.]+)", data):
        if module.startswith(PY_MODULES):
            return True
    for names in re.findall(rb"import[ \t]+([\w., \t]+)", data):
        if any(n.strip().startswith(PY_MODULES) for n in names.split(b",")):
            return True
    return False


@pytest.mark.parametrize(
    ("text", "matters"),
    [
        (b"from claude_agent_sdk import query\n", True),
        (b"import numpy as np, openai\n", True),
        (b"import os,agents\n", True),
        (b"from  fastmcp.server import FastMCP\n", True),
        (b"def f():\n    from langchain_community.tools import ShellTool\n", True),
        (b"if x: import smolagents\n", True),
        (b"from . import agents\n", True),  # `import agents`, relative: still looked at
        (b"import\topenai\n", True),
        (b"run(['claude', '-p', prompt])\n", True),
        (b"import os\nfrom dataclasses import dataclass\n", False),
        (b"importopenai = 1\n", False),
        (b"# the openai client is built elsewhere\n", False),
        (b"from myapp.agents_util import x\n", False),
    ],
)
def test_what_the_pre_filter_lets_through(text: bytes, matters: bool) -> None:
    assert python_may_matter(text) is matters
    assert _reference(text) is matters


_TOKENS = st.sampled_from(
    [
        *PY_MODULES,
        b"from",
        b"import",
        b" ",
        b"\t",
        b"\n",
        b",",
        b".",
        b"as",
        b"np",
        b"os",
        b"x_",
        b"fromimport",
        b"(",
        b"#",
        b"clau",
        b"de",
    ]
)


@settings(max_examples=1500, deadline=None)
@given(st.lists(_TOKENS, max_size=30).map(b"".join))
def test_nothing_the_rule_names_is_filtered_out(data: bytes) -> None:
    if _reference(data):
        assert python_may_matter(data)
