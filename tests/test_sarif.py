"""SARIF: valid against the 2.1.0 schema, rules[] carries each rule's page, suppressions."""

from __future__ import annotations

from typing import Any

import jsonschema

from agentguard.engine import make_report
from agentguard.findings import Location, Source
from agentguard.report.sarif import report_to_sarif
from agentguard.rules.base import all_rules
from agentguard.rules.hardening import RunsAsRoot
from agentguard.rules.mounts import DockerSocketExposed


def test_rules_carry_help_text_and_help_uri(sarif_schema: dict[str, Any]) -> None:
    doc = report_to_sarif(make_report("check", [], []))
    jsonschema.validate(doc, sarif_schema)
    rules = doc["runs"][0]["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [r.id for r in all_rules()]
    for rule, entry in zip(all_rules(), rules, strict=True):
        assert entry["name"] == rule.name
        assert entry["shortDescription"] == {"text": rule.title}
        assert entry["help"] == {"text": rule.doc(), "markdown": rule.doc()}
        assert entry["helpUri"] == (
            f"https://github.com/agentguard/agentguard/blob/main/docs/rules/{rule.id}.md"
        )
        for section in ("## What it does", "## Why is this bad?", "## Use instead"):
            assert section in entry["help"]["markdown"]


def test_suppressed_and_failed_are_carried_and_valid(sarif_schema: dict[str, Any]) -> None:
    root = RunsAsRoot.finding(
        "The image runs as root.",
        locations=[Location(path="Dockerfile", line=3)],
        fix="Add `USER 10001`.",
    )
    sock = DockerSocketExposed.finding(
        "Service agent mounts /var/run/docker.sock.",
        locations=[Location(path="compose.yaml", line=5)],
        fix="Remove the socket mount.",
    )
    report = make_report(
        "check",
        [root.with_suppression("inline: Dockerfile:2"), sock.with_suppression("baseline")],
        [
            Source.failed(
                "image", "agent:1", "no such image", error_code="image-not-found", retryable=False
            )
        ],
    )
    doc = report_to_sarif(report)
    jsonschema.validate(doc, sarif_schema)
    run = doc["runs"][0]
    assert {r["ruleId"]: r["suppressions"] for r in run["results"]} == {
        "AG203": [{"kind": "external", "justification": "baseline"}],
        "AG401": [{"kind": "inSource", "justification": "inline: Dockerfile:2"}],
    }
    assert run["invocations"][0]["executionSuccessful"] is False
    assert run["invocations"][0]["toolExecutionNotifications"][0]["descriptor"] == {
        "id": "image-not-found"
    }
