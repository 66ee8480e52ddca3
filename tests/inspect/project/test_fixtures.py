"""AG210, AG211, AG301-AG305, AG310, AG320 over fixture projects modelled on real ones.

Fail cases produce exactly the reviewed findings for their rule (whole findings:
message, location, evidence, fix, severity, confidence); pass cases produce none, and
every file in them is read without a failed source.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentguard.findings import SourceStatus
from tests.inspect.project.support import AGENT_RULES, assert_expected, cases, scan

FAIL = [(r, c) for r in AGENT_RULES for c in cases(r, "fail")]
PASS = [(r, c) for r in AGENT_RULES for c in cases(r, "pass")]


def test_every_rule_has_fail_and_pass_cases() -> None:
    for rule_id in AGENT_RULES:
        assert cases(rule_id, "fail"), rule_id
        assert cases(rule_id, "pass"), rule_id


@pytest.mark.parametrize(("rule_id", "case"), FAIL, ids=[f"{r}-{c.name}" for r, c in FAIL])
def test_fail_case_reports_exactly_the_reviewed_findings(rule_id: str, case: Path) -> None:
    found = assert_expected(case, rule_id)
    assert found, f"{case} must produce {rule_id}"
    _, sources = scan(case)
    assert all(s.status is SourceStatus.OK for s in sources), sources


@pytest.mark.parametrize(("rule_id", "case"), PASS, ids=[f"{r}-{c.name}" for r, c in PASS])
def test_pass_case_reports_nothing_for_the_rule(rule_id: str, case: Path) -> None:
    findings, sources = scan(case)
    assert sources and all(s.status is SourceStatus.OK for s in sources), sources
    assert [f.to_json() for f in findings if f.rule_id == rule_id] == []
