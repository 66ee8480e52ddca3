"""AG320 over a library's tests of its own fallback class (pydantic-ai's ``FallbackModel``
in its ``tests/``): set aside as one skipped source that says how many and why; the same
call in the library's examples, or in another project's tests, stays a finding."""

from __future__ import annotations

import shutil
from pathlib import Path

from agentguard.engine.own_tests import own_api_tests
from agentguard.engine.project import inspect_project
from agentguard.facts.agents import FallbackSite
from agentguard.findings import Source
from agentguard.inspect.project.own_modules import project_modules
from tests.inspect.project.support import FIXTURES, assert_expected

CASES = FIXTURES / "AG320" / "own-tests"
SET_ASIDE = Source.skipped(
    "fallbacks",
    "pydantic_ai.FallbackModel, pydantic_ai.models.fallback.FallbackModel",
    "3 fallback site(s) in the tests of the library that defines pydantic_ai.FallbackModel "
    "and pydantic_ai.models.fallback.FallbackModel (pydantic_ai.FallbackModel: 1, "
    "pydantic_ai.models.fallback.FallbackModel: 2): the library testing its own class, not a "
    "deployment's fallback (not reported)",
)


def _not_ok(case: Path, **kwargs: object) -> list[Source]:
    result = inspect_project(case, **kwargs)  # type: ignore[arg-type]
    return [s for s in result.sources if s.status.value != "ok"]


def test_the_library_testing_its_own_class_is_one_skipped_source() -> None:
    case = CASES / "library"
    found = assert_expected(case, "AG320")  # the example's use only
    assert [f["locations"][0]["path"] for f in found] == ["examples/fallback_demo.py"]
    assert _not_ok(case) == [SET_ASIDE]


def test_another_projects_tests_of_the_class_are_reported() -> None:
    case = CASES / "outside"
    found = assert_expected(case, "AG320")
    assert [f["locations"][0]["path"] for f in found] == ["tests/test_agent.py"]
    assert _not_ok(case) == []


def _reported(case: Path, **kwargs: object) -> list[str]:
    result = inspect_project(case, **kwargs)  # type: ignore[arg-type]
    return sorted(
        f"{f.locations[0].path}:{f.locations[0].line}"
        for f in result.findings
        if f.rule_id == "AG320"
    )


ALL_FOUR = [
    "examples/fallback_demo.py:6",
    "tests/models/test_fallback.py:14",
    "tests/models/test_fallback.py:19",
    "tests/models/test_fallback.py:24",
]


def test_configuration_may_keep_a_site_reported_never_set_one_aside(tmp_path: Path) -> None:
    """The configuration is the pull request's: calling the tests production keeps them
    reported; calling a folder whose names do not say test (`qa/`) test sets nothing aside."""
    lib = CASES / "library"
    assert _reported(lib, contexts={"production": ("tests/**",)}) == ALL_FOUR
    assert _not_ok(lib, contexts={"production": ("tests/**",)}) == []
    case = tmp_path / "library"
    shutil.copytree(lib, case)
    (case / "qa").mkdir()
    (case / "tests" / "models" / "test_fallback.py").rename(case / "qa" / "fallback_checks.py")
    assert _reported(case, contexts={"test": ("qa/**",)}) == [
        "examples/fallback_demo.py:6",
        "qa/fallback_checks.py:14",
        "qa/fallback_checks.py:19",
        "qa/fallback_checks.py:24",
    ]
    assert _not_ok(case, contexts={"test": ("qa/**",)}) == []


def test_own_modules_include_workspace_members() -> None:
    assert project_modules(CASES / "library") == {"pydantic_ai"}
    assert project_modules(CASES / "outside") == {"shop_bot"}


def test_a_site_without_a_callee_is_never_set_aside(tmp_path: Path) -> None:
    """An `except` handler names no class: even a checkout whose root holds a file named
    `.py` (an empty module name) cannot make it the library's own."""
    for name in (".py", "my-tool.py", "ok.py"):
        (tmp_path / name).write_text("", encoding="utf-8")
    assert project_modules(tmp_path) == {"ok"}
    site = FallbackSite("except-handler", "tests/test_bot.py", 3, "`except Exception` handler")
    assert own_api_tests([site], frozenset({"", "ok"}), {}) == ((site,), ())
