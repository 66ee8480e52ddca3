"""AG202-AG204 and AG401-AG407 from compose, devcontainer and Dockerfile fixtures: fail
cases match their reviewed findings exactly (expected.json), pass cases produce none."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentguard.findings import SourceStatus
from tests.inspect.containers.support import assert_expected, cases, scan

RULES = ("AG202", "AG203", "AG204", "AG401", "AG402", "AG403", "AG404", "AG405", "AG406", "AG407")
MINE = ("compose-", "devcontainer-", "dockerfile-", "pass-through")
FAIL = [(rule, case) for rule in RULES for case in cases(rule, "fail", MINE)]
PASS = [(rule, case) for rule in RULES for case in cases(rule, "pass", MINE)]


@pytest.mark.parametrize(("rule_id", "case"), FAIL, ids=[f"{r}-{c.name}" for r, c in FAIL])
def test_fail_case_reports_exactly_the_reviewed_findings(rule_id: str, case: Path) -> None:
    found = assert_expected(case, rule_id)
    assert found, f"{case} must produce {rule_id}"


@pytest.mark.parametrize(("rule_id", "case"), PASS, ids=[f"{r}-{c.name}" for r, c in PASS])
def test_pass_case_reports_nothing_for_the_rule(rule_id: str, case: Path) -> None:
    findings, sources = scan(case)
    assert sources and all(s.status is SourceStatus.OK for s in sources)
    assert [f.to_json() for f in findings if f.rule_id == rule_id] == []
