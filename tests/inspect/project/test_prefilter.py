"""The byte pre-filter that decides which Python files are parsed: it may let a file
through that turns out not to matter (that only costs a parse), never the other way."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentguard.inspect.project.files import (
    MAP_MODULES,
    PY_MODULES,
    python_may_matter,
    python_risk_may_matter,
)

WATCHED = PY_MODULES + MAP_MODULES  # (the map's frameworks are read for their agents alone)


# what stands between two tokens of a line: blanks, form feeds, backslash continuations
_LINE_BLANKS = re.compile(rb"\\(?:\r\n|\r|\n)|\f")


def _reference(data: bytes) -> bool:
    """The rule spelled out: ``claude`` anywhere, or any ``from X`` / ``import a, X`` whose
    module X starts with one of the watched names (a continuation or a form feed between
    the tokens read as a blank)."""
    if b"claude" in data:
        return True
    data = _LINE_BLANKS.sub(b" ", data)
    for module in re.findall(rb"from[ \t]+([\w.]+)", data):
        if module.startswith(WATCHED):
            return True
    for names in re.findall(rb"import[ \t]+([\w., \t]+)", data):
        if any(n.strip().startswith(WATCHED) for n in names.split(b",")):
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
        (b"from browser_use import Agent\n", True),  # (for the map's agent definitions)
        (b"import aider.coders\n", True),
        # (Python's blanks between a line's tokens: a backslash continuation, a form feed)
        (b"from \\\n    agents import ShellTool\n", True),
        (b"import os, \\\r\n  agents\n", True),
        (b"import\x0cagents\n", True),
        (b"from\\\nmcp import x\n", True),
        (b"import os,\x0copenai\n", True),
    ],
)
def test_what_the_pre_filter_lets_through(text: bytes, matters: bool) -> None:
    assert python_may_matter(text) is matters
    assert _reference(text) is matters


_TOKENS = st.sampled_from(
    [
        *WATCHED,
        b"from",
        b"import",
        b" ",
        b"\t",
        b"\n",
        b"\\\n",
        b"\x0c",
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


# The pre-filter as it was written before it became one scan (three scans of each file),
# its blanks now Python's (a form feed, a continuation): the one-scan test must let exactly
# the same files through, no more, no fewer. (The import lists are split in Python here: a
# regular expression that takes them whole is the code under test.)
def _before(modules: tuple[bytes, ...]) -> tuple[re.Pattern[bytes], tuple[bytes, ...]]:
    alternatives = b"|".join(re.escape(m) for m in modules)
    blank = rb"(?:[ \t\f]|\\(?:\r\n|\r|\n))"
    return re.compile(rb"from" + blank + rb"+(?:" + alternatives + rb")"), modules


def _imports_before(data: bytes, modules: tuple[bytes, ...]) -> bool:
    # (a dotted module imported from its package, `from google import genai`: its package
    # after `from`, and its other name anywhere)
    for dotted in (m for m in modules if b"." in m):
        head, rest = dotted.split(b".", 1)
        blank = rb"(?:[ \t\f]|\\(?:\r\n|\r|\n))"
        if re.search(rb"from" + blank + rb"+" + re.escape(head), data) and rest in data:
            return True
    data = _LINE_BLANKS.sub(b" ", data)
    for names in re.findall(rb"import[ \t]([\w., \t]*)", data):
        if any(n.strip(b" \t").startswith(modules) for n in names.split(b",")):
            return True
    return False


_FROM_BEFORE, _IMPORT_BEFORE = _before(WATCHED)
_RISK_FROM, _RISK_IMPORT = _before(PY_MODULES)


_FROM_DOCKER, _DOCKER = _before((b"docker",))


def _docker_harness(data: bytes) -> bool:
    """An import of docker (`import docker`, `import os, docker`, `from docker...`) and,
    anywhere, a container start: `containers` (grouping brackets may close after it), then
    `.run`/`.create`, blanks and line ends around the dot, or a comment where one may stand
    (maybe)."""
    imported = _FROM_DOCKER.search(data) is not None or _imports_before(data, _DOCKER)
    flat = re.sub(rb"\\\r?\n|[ \t\f\r\n]", b"", data)
    start = rb"containers\)*(?:#|\.(?:#|(?:run|create)(?!\w)))"
    return imported and re.search(start, flat) is not None


def _three_scans(data: bytes, risk_only: bool = False) -> bool:
    from_, import_ = (_RISK_FROM, _RISK_IMPORT) if risk_only else (_FROM_BEFORE, _IMPORT_BEFORE)
    return (
        b"claude" in data
        or from_.search(data) is not None
        or _imports_before(data, import_)
        or _docker_harness(data)
    )


@pytest.mark.parametrize(
    ("text", "matters"),
    [
        (b"import a as b, mcp\n", True),
        (b"import a as b,\tmcp.server\n", True),
        (b"from\tmcp import x\n", True),
        (b"from \t mcp import x\n", True),
        (b"fromage = mcp\n", False),
        (b"import docker\nc = client.containers.run(image)\n", True),
        (b"from docker.errors import APIError\nclient.containers.create(i)\n", True),
        (b"import docker\n", False),
        (b"client.containers.run(image)\nimport docker\n", True),  # (imported before it runs)
        (b"import dockerfile\nclient.containers.run(image)\n", True),  # (a `docker...` module)
        (b"import os, docker\nc = client.containers .run (image)\n", True),
        (b"import docker\n(client.containers\n  .create)(x)\n", True),
        (b"import docker\nclient.containers  # the start\n", True),  # (a comment: maybe)
        (b"import docker\nclient.containers.runner(x)\n", False),
        (b"frommcp = 1\n", False),
        (b"frompmcp = 1\n", False),  # the byte after `m` is `p`, but this is not `import`
        (b"fromp agents\n", False),
        (b"import_mcp = 1\n", False),
        (b"imp ort mcp\n", False),
        (b"mport mcp\n", False),
        (b"xmport mcp\n", False),
        (b"reimport mcp\n", True),  # bytes, not syntax: `import mcp` is in there
        (b"transfrom mcp\n", True),
        (b"from\nmcp import x\n", False),
        (b"import\nmcp\n", False),
        (b"import os, sys, openai\n", True),
        (b"import os; import openai\n", True),
        (b"import os; openai\n", False),
        (b"x = 'from agents'\n", True),
        (b"from google.genai import types\n", True),
        (
            b"from google import genai\n",
            True,
        ),  # (a dotted module as its package's name)  # google.genai is imported as `genai`...
        (b"import google.generativeai as g\n", True),
        (b"m", False),
        (b"mp", False),
        (b"from", False),
        (b"from ", False),
        (b"from mcp", True),
        (b"import mcp", True),
        (b"port mcp", False),
        (b"import\t\tagno", True),
        (b"claud e", False),
        (b"# claude\n", True),
    ],
)
def test_one_scan_lets_through_what_three_did(text: bytes, matters: bool) -> None:
    assert _three_scans(text) is matters
    assert python_may_matter(text) is matters


_TRICKY = st.sampled_from(
    [
        *WATCHED,
        b"from",
        b"import",
        b"fromp",
        b"fr",
        b"om",
        b"imp",
        b"ort",
        b"mport",
        b"m",
        b"p",
        b"i",
        b" ",
        b"\t",
        b"\n",
        b",",
        b".",
        b"as",
        b"_",
        b"x",
        b"clau",
        b"de",
        b"google",
        b".genai",
    ]
)


@settings(max_examples=3000, deadline=None)
@given(st.lists(_TRICKY, max_size=24).map(b"".join))
def test_one_scan_and_three_scans_agree(data: bytes) -> None:
    assert python_may_matter(data) is _three_scans(data)
    assert python_risk_may_matter(data) is _three_scans(data, risk_only=True)


def _sources() -> list[bytes]:
    root = Path(__file__).resolve().parents[3]
    return [p.read_bytes() for top in ("agentguard", "tests") for p in (root / top).rglob("*.py")]


def test_one_scan_and_three_scans_agree_on_real_code() -> None:
    """Every Python file of this repository, as it is and with an agent import planted in
    its import lines or comments (the shapes real code has), gives the same answer."""
    corpus = _sources()
    assert len(corpus) > 100
    variants = []
    for data in corpus:
        variants.append(data)
        variants.append(data.replace(b"import os\n", b"import os, openai\n", 1))
        variants.append(data.replace(b"from __future__", b"from\tmcp", 1))
        variants.append(data.replace(b"claude", b"clau de"))
        variants.append(data.replace(b"import ", b"import_", 1))
        variants.append(data.replace(b"import os\n", b"from browser_use import Agent\n", 1))
    assert sum(python_may_matter(v) for v in variants) > 0
    assert sum(not python_may_matter(v) for v in variants) > 0
    assert sum(python_may_matter(v) and not python_risk_may_matter(v) for v in variants) > 0
    for v in variants:
        assert python_may_matter(v) is _three_scans(v)
        assert python_risk_may_matter(v) is _three_scans(v, risk_only=True)


@pytest.mark.parametrize(
    "data",
    [
        b"import " + b"a, " * 200_000 + b"x\n",  # (28 names took minutes)
        b"import a," * 200_000,
        b"import " + b"\\\n" * 200_000,
        b"from" + b" \\\n" * 200_000 + b"x",
        b"import a" + b" " * 1_000_000,
    ],
    ids=["one-long-list", "imports-in-a-list", "continuations", "from-continued", "blanks"],
)
def test_the_first_byte_test_is_linear_on_hostile_import_lines(data: bytes) -> None:
    """Every Python file a pull request holds goes through this test: an import list read
    from each `import`, its blanks split every way, took time exponential in its commas
    (`import a, a, ..., x`: 24 names 2 s, 28 names minutes). Each list is now read once."""
    import time

    started = time.perf_counter()
    assert not python_may_matter(data)
    assert time.perf_counter() - started < 2.0  # (about 0.1 s for 1.8 MB)
