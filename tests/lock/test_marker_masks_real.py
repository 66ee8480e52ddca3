"""The grouped marker masks (:meth:`EnvironmentTable.mask`) against one evaluation per
environment, over every marker of real locks (``uv lock`` and ``uv pip compile
--universal`` of browser-use, crewAI, openai-agents[litellm], smolagents[all] and
pydantic-ai, with the ``Requires-Dist`` markers of a few hundred installed packages) and
over hand-written odd spellings: reversed comparisons, ``in``/``not in``, ``===``,
variables compared with variables, the dotted and legacy names, extras spelled oddly."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from agentguard.facts.environments import EnvironmentTable
from tests.lock.test_marker_masks_fast import _mask_one_by_one

FIXTURES = Path(__file__).parent.parent / "fixtures" / "markers"
REAL = (FIXTURES / "real-locks.txt").read_text(encoding="utf-8").splitlines()
ODD = (FIXTURES / "odd-spellings.txt").read_text(encoding="utf-8").splitlines()
ALL = [m for m in (*REAL, *ODD) if m.strip()]


def _tables() -> list[EnvironmentTable]:
    pick = random.Random(26)
    return [
        EnvironmentTable(ALL, None),
        EnvironmentTable(ALL, ">=3.11"),
        EnvironmentTable(pick.sample(ALL, 12), ">=3.9"),
        EnvironmentTable(pick.sample(REAL, 5), None),
    ]


@pytest.mark.parametrize("table", _tables(), ids=["all", "all-3.11", "sample", "small"])
def test_every_real_and_odd_marker_masks_as_one_evaluation_per_environment(
    table: EnvironmentTable,
) -> None:
    assert len(REAL) > 250 and len(ODD) > 50
    wrong = [m for m in ALL if table.mask(m) != _mask_one_by_one(table, m)]
    assert wrong == []
