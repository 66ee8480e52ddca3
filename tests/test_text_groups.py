"""AG110 drift in text: one block per cause with a table of packages; JSON and SARIF keep one
result per package."""

from __future__ import annotations

import json
from typing import Any

from agentguard.engine import make_report
from agentguard.inspect.lock_input import LockedPin, LockInput
from agentguard.report import Format, render
from agentguard.report.sarif import report_to_sarif
from agentguard.rules.installed_drift import check_drift
from tests.rules.facts_loader import load_image
from tests.sarif_checks import assert_uploadable
from tests.snapshot import normalise

VENV = "/opt/venv/lib/python3.12/site-packages"


def _drifting_report() -> Any:
    image = load_image("AG110", "fail")  # anyio, mcp, pip, rich in the venv; python-apt
    pins = (
        # every installed venv package locked at another version: one cause, four packages
        LockedPin("anyio", "4.3.0", None),
        LockedPin("mcp", "1.27.0", None),
        LockedPin("pip", "23.3", None),
        LockedPin("rich", "13.7.0", None),
        # three locked packages missing
        LockedPin("httpx", "0.27.0", None),
        LockedPin("sniffio", "1.3.1", None),
        LockedPin("uvloop", "0.21.0", 'platform_python_implementation == "CPython"'),
    )
    lock = LockInput("pylock.toml", "sha256:" + "0" * 64, pins, discovered=False)
    findings = check_drift(image, lock)
    return make_report("inspect", findings, [], target=image.target)


def test_drift_is_one_block_per_cause_in_text() -> None:
    report = _drifting_report()
    assert len(report.findings) == 7  # one finding per package, as before
    text = normalise(render(report, Format.TEXT))
    blocks = text.split("\n\n")
    assert blocks[1:3] == [
        "HIGH     AG110 Installed packages drift from the lock  (4 packages)\n"
        "  4 packages are installed at another version than the lock's.\n"
        "  package  locked  installed\n"
        f"  anyio    4.3.0   4.4.0 in {VENV}\n"
        f"  mcp      1.27.0  2.3.0 in {VENV}\n"
        f"  pip      23.3    24.0 in {VENV}\n"
        f"  rich     13.7.0  13.9.4 in {VENV}\n"
        "  lock: pylock.toml\n"
        "  fix: Rebuild the image installing the lock with `--require-hashes`; where a new "
        "version is wanted, re-run `agentguard lock` and review it.",
        "MEDIUM   AG110 Installed packages drift from the lock  (3 packages)\n"
        "  3 packages are in the lock but not installed.\n"
        "  package  locked  installed  note\n"
        "  httpx    0.27.0  -\n"
        "  sniffio  1.3.1   -\n"
        "  uvloop   0.21.0  -          confidence: low\n"
        "  lock: pylock.toml\n"
        "  fix: Install the lock as written: `pip install --require-hashes -r` the lock.",
    ]
    assert text.count("AG110") == 2


def test_fewer_than_three_of_a_cause_stay_findings() -> None:
    report = _drifting_report()
    two = make_report(
        "inspect",
        [f for f in report.findings if f.evidence["package"] in ("mcp", "anyio")],
        [],
        target="agent:1",
    )
    text = render(two, Format.TEXT)
    assert text.count("AG110") == 2
    assert "mcp is locked at 1.27.0 in pylock.toml but image agent:1 has 2.3.0" in text


def test_json_and_sarif_keep_one_result_per_package(sarif_schema: dict[str, Any]) -> None:
    report = _drifting_report()
    doc = json.loads(render(report, Format.JSON))
    assert sorted(f["evidence"]["package"] for f in doc["findings"]) == [
        "anyio", "httpx", "mcp", "pip", "rich", "sniffio", "uvloop",
    ]  # fmt: skip
    sarif = report_to_sarif(report)
    assert_uploadable(sarif, sarif_schema)
    results = sarif["runs"][0]["results"]
    assert len(results) == 7
    assert len({r["partialFingerprints"]["agentguard/v1"] for r in results}) == 7


def test_the_count_of_summarised_findings_is_a_line_of_its_own() -> None:
    """Found running the README's first command: the escaper showed the count line's leading
    newline as a literal `\\n`. Low findings past the fifth are counted on a line of their
    own, after a blank line, with no escape in it."""
    from agentguard.findings import Location, Severity
    from agentguard.rules.deps import MajorSpanningRange

    findings = [
        MajorSpanningRange.finding(
            f"pkg{i} admits two majors.",
            locations=[Location(path="pyproject.toml", line=i + 1)],
            fix="Cap it.",
            severity=Severity.LOW,
        )
        for i in range(8)
    ]
    text = render(make_report("lock", findings, []), Format.TEXT)
    lines = text.splitlines()
    count = [n for n, line in enumerate(lines) if "more AG101 findings" in line]
    assert len(count) == 1
    assert lines[count[0]] == "  ... and 3 more AG101 findings (low/info; --verbose shows all)"
    assert lines[count[0] - 1] == ""
    assert "\\n" not in text
