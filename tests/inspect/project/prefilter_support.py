"""What the pre-filter tests share: a file read by every reader (no pre-filter), and its
facts less the ``parsed`` flag, to compare a pre-filtered reading with it."""

from __future__ import annotations

import dataclasses
import textwrap
from pathlib import Path

from agentguard.inspect.project.python_agents import PythonFacts, Wanted, analyse_python

# agbench's harness: it imports the Docker SDK and no agent module, and starts the
# benchmark's container for its scenario script (the Docker harness tests respell it)
HARNESS = (
    Path(__file__).resolve().parents[2]
    / "fixtures/AG301/fail/harness-container-credited/python/packages/agbench/src/agbench"
    / "run_cmd.py"
)


def facts(found: PythonFacts) -> dict[str, object]:
    got = dataclasses.asdict(found)
    got.pop("parsed")
    return got


def full(path: str, data: bytes) -> PythonFacts:
    """``data`` read by every reader, as if each pre-filter had said yes."""
    return analyse_python(path, data, wanted=Wanted.every(data))


def src(text: str) -> bytes:
    return textwrap.dedent(text).encode()


def read_whole(path: str, data: bytes) -> PythonFacts:
    """``data`` read by every reader, once the pre-filtered reading is checked to find the
    same facts (what every soundness test of a pre-filter asks)."""
    whole = full(path, data)
    assert facts(analyse_python(path, data)) == facts(whole), path
    return whole
