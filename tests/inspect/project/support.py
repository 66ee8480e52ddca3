"""Fixture helpers for the agent-configuration rules: run the project scan over a fixture
folder and compare whole findings with the reviewed ``expected.json`` beside it.

``AGENTGUARD_UPDATE_SNAPSHOTS=1`` rewrites ``expected.json`` after a deliberate change
(review the diff like code).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from agentguard.engine.project import inspect_project
from agentguard.findings import Finding, Source

FIXTURES = Path(__file__).resolve().parent.parent.parent / "fixtures"
AGENT_RULES = (
    *("AG210", "AG211", "AG301", "AG302", "AG303", "AG304", "AG305", "AG306", "AG310"),
    *("AG320", "AG321", "AG330", "AG331"),
)


def cases(rule_id: str, kind: str) -> list[Path]:
    root = FIXTURES / rule_id / kind
    return sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []


def scan(case: Path) -> tuple[list[Finding], list[Source]]:
    result = inspect_project(case)
    return list(result.findings), list(result.sources)


def finding_json(f: Finding) -> dict[str, Any]:
    out = f.to_json()
    out.pop("fingerprint")
    return out


def assert_expected(case: Path, rule_id: str) -> list[dict[str, Any]]:
    findings, _ = scan(case)
    found = [finding_json(f) for f in findings if f.rule_id == rule_id]
    path = case / "expected.json"
    if os.environ.get("AGENTGUARD_UPDATE_SNAPSHOTS") == "1" or not path.exists():
        path.write_text(json.dumps(found, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        if os.environ.get("AGENTGUARD_UPDATE_SNAPSHOTS") != "1":
            raise AssertionError(f"new expectation written to {path}: review it, then re-run")
    expected = json.loads(path.read_text(encoding="utf-8"))
    assert found == expected
    return found
