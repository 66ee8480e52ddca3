"""SARIF: valid against the 2.1.0 schema, rules[] carries each rule's page, suppressions."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from agentguard.engine import make_report
from agentguard.findings import Location, Source
from agentguard.report import sarif
from agentguard.report.sarif import report_to_sarif
from agentguard.rules.base import all_rules
from agentguard.rules.hardening import RunsAsRoot
from agentguard.rules.mounts import DockerSocketExposed
from tests.sarif_checks import assert_uploadable


def test_rules_carry_help_text_severity_and_tags(sarif_schema: dict[str, Any]) -> None:
    doc = report_to_sarif(make_report("check", [], []))
    assert_uploadable(doc, sarif_schema)
    rules = doc["runs"][0]["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [r.id for r in all_rules()]
    for rule, entry in zip(all_rules(), rules, strict=True):
        assert entry["name"] == rule.name
        assert entry["shortDescription"] == {"text": rule.title}
        assert entry["help"] == {"text": rule.doc(), "markdown": rule.doc()}
        assert (
            entry["properties"]["security-severity"]
            == {
                "critical": "9.5",
                "high": "8.0",
                "medium": "5.5",
                "low": "2.0",
                "info": "0.0",
            }[rule.default_severity.value]
        )
        assert entry["properties"]["tags"][:2] == ["security", rule.family]
        for section in ("## What it does", "## Why is this bad?", "## Use instead"):
            assert section in entry["help"]["markdown"]


def test_help_uri_comes_from_the_projects_metadata_never_invented(
    sarif_schema: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    # as installed here: the metadata declares no URL, so there is no helpUri at all (the
    # rule page travels in help) and no informationUri
    assert sarif.project_urls() == {}
    driver = report_to_sarif(make_report("check", [], []))["runs"][0]["tool"]["driver"]
    assert "informationUri" not in driver
    assert all("helpUri" not in r for r in driver["rules"])

    home = "https://example.org/agentguard"
    monkeypatch.setattr(sarif, "project_urls", lambda: {"homepage": home})
    doc = report_to_sarif(make_report("check", [], []))
    assert_uploadable(doc, sarif_schema)
    driver = doc["runs"][0]["tool"]["driver"]
    assert driver["informationUri"] == home
    assert {r["helpUri"] for r in driver["rules"]} == {home}

    pages = "https://example.org/agentguard/docs/rules/"
    monkeypatch.setattr(sarif, "project_urls", lambda: {"homepage": home, "rules": pages})
    driver = report_to_sarif(make_report("check", [], []))["runs"][0]["tool"]["driver"]
    assert [r["helpUri"] for r in driver["rules"]] == [f"{pages}{r.id}.md" for r in all_rules()]


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
