"""AG120, AG121, AG130, AG212 over their fixture folders: fail cases match their reviewed
findings exactly (expected.json beside each case), pass cases produce none."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentguard.findings import SourceStatus
from tests.inspect.containers.support import assert_expected, cases, scan

MINE = (
    "dockerfile",
    "compose",
    "devcontainer",
    "requirements",
    "pyproject",
    "no-",
    "dockerignore",
    "allow-",
    "copy-",
    "hashed",
    "constraints",
    "capped",
)
FAIL = [
    (rule, case)
    for rule in ("AG120", "AG121", "AG130", "AG212")
    for case in cases(rule, "fail", MINE)
]
PASS = [
    (rule, case)
    for rule in ("AG120", "AG121", "AG130", "AG212")
    for case in cases(rule, "pass", MINE)
]


@pytest.mark.parametrize(("rule_id", "case"), FAIL, ids=[f"{r}-{c.name}" for r, c in FAIL])
def test_fail_case_reports_exactly_the_reviewed_findings(rule_id: str, case: Path) -> None:
    found = assert_expected(case, rule_id)
    assert found, f"{case} must produce {rule_id}"


@pytest.mark.parametrize(("rule_id", "case"), PASS, ids=[f"{r}-{c.name}" for r, c in PASS])
def test_pass_case_reports_nothing_for_the_rule(rule_id: str, case: Path) -> None:
    findings, sources = scan(case)
    assert sources and all(s.status is SourceStatus.OK for s in sources)
    assert [f.to_json() for f in findings if f.rule_id == rule_id] == []
