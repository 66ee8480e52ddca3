"""Shared helpers: read a fixture folder the way the project walk hands files over."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from agentguard.engine.project import scan_container_files
from agentguard.findings import Finding, Source, SourceStatus
from agentguard.inspect.facts import ProjectFile
from agentguard.inspect.project.kinds import wants_file

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
EXPECTED = "expected.json"


def project_files(folder: Path) -> list[ProjectFile]:
    return [
        ProjectFile(p.relative_to(folder).as_posix(), p.read_bytes())
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != EXPECTED and wants_file(p.relative_to(folder).as_posix())
    ]


def scan(folder: Path) -> tuple[list[Finding], list[Source]]:
    findings, sources, _ = scan_container_files(project_files(folder))
    return findings, sources


def whole(findings: list[Finding]) -> list[dict[str, Any]]:
    """Findings as their full JSON form (what every report renders), in a stable order."""
    out = [f.to_json() for f in findings]
    return sorted(
        out,
        key=lambda d: (
            d["locations"][0].get("path", ""),
            d["locations"][0].get("line") or 0,
            d["message"],
        ),
    )


def assert_expected(case: Path, rule_id: str) -> list[dict[str, Any]]:
    """The case's findings of ``rule_id`` equal the reviewed ``expected.json`` beside them."""
    findings, sources = scan(case)
    assert [s for s in sources if s.status is not SourceStatus.OK] == []
    actual = whole([f for f in findings if f.rule_id == rule_id])
    path = case / EXPECTED
    if os.environ.get("AGENTGUARD_UPDATE_SNAPSHOTS") == "1":
        path.write_text(json.dumps(actual, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    expected = json.loads(path.read_text(encoding="utf-8"))
    assert actual == expected
    return actual


def cases(rule_id: str, outcome: str, prefixes: tuple[str, ...]) -> list[Path]:
    root = FIXTURES / rule_id / outcome
    return sorted(p for p in root.iterdir() if p.is_dir() and p.name.startswith(prefixes))
