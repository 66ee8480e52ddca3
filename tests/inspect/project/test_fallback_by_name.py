"""A try body's model settings handed over by name (``llm.with_config(cfg)``, ``**cfg``)
count as the try's own only where the name is bound once, above, in the same scope, to a
dict literal (open_deep_research's token-limit retry: fixtures/AG320/pass/
py-model-retried-by-name). Each file here is a real switch to another model that an
attack on that rule found hidden by a looser one (a name only read, two bindings, a
closure, a global, a comprehension's filter, a value read in the wrong scope): each is
still a fallback site."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentguard.inspect.project.python_agents import analyse_python

CASES = sorted((Path(__file__).parents[2] / "fixtures" / "AG320" / "by-name-switches").glob("*.py"))


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_a_switch_beside_a_config_named_in_the_try_is_still_a_fallback(case: Path) -> None:
    sites = analyse_python(case.name, case.read_bytes()).fallbacks
    assert [s.kind for s in sites] == ["except-handler"], case.name
    assert "asks for model" in sites[0].detail


def test_the_cases_are_there() -> None:
    assert len(CASES) == 14
