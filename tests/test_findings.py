"""Finding's with_* copies: what dataclasses.replace would give, the original untouched."""

from __future__ import annotations

import dataclasses

from agentguard.findings import Confidence, Finding, Fix, Location, Severity


def _finding() -> Finding:
    return Finding(
        "AG301",
        "Shell tool",
        Severity.HIGH,
        Confidence.HIGH,
        "tools=['Bash']",
        (Location(path="bot.py", line=2),),
        Fix("List the tools the task needs."),
        evidence={"tools": ["Bash"]},
    )


def test_with_copies_equal_dataclasses_replace_and_leave_the_original() -> None:
    f = _finding()
    cases = [
        (f.with_suppression("inline: bot.py:1"), {"suppressed": "inline: bot.py:1"}),
        (f.with_severity(Severity.LOW), {"severity": Severity.LOW}),
        (f.with_subject("agent bot.py:2"), {"subject": "agent bot.py:2"}),
        (f.with_context("test"), {"context": "test", "severity": Severity.HIGH}),
        (f.with_context("test", Severity.LOW), {"context": "test", "severity": Severity.LOW}),
    ]
    for copy, changes in cases:
        expected = dataclasses.replace(f, **changes)
        assert copy == expected
        assert type(copy) is Finding and copy is not f
        assert vars(copy) == vars(expected)
    assert f == _finding()  # the original is unchanged
    assert f.suppressed is None and f.context is None and f.subject is None


def test_finding_keeps_what_the_fast_copy_relies_on() -> None:
    # a __post_init__ or a field outside __init__ would be skipped by the copy: change
    # findings._replace (back to dataclasses.replace) before adding one
    assert not hasattr(Finding, "__post_init__")
    assert all(f.init for f in dataclasses.fields(Finding))
    assert not hasattr(Finding, "__slots__")
