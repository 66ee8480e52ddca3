"""The published JSON report schema (agentguard.report/1): shipped in the package, strict
where the report is fixed, and applied to every JSON report the tests make."""

from __future__ import annotations

import copy
import json
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from agentguard.engine import make_report
from agentguard.findings import Location, Source
from agentguard.report import Format, json_out, render
from agentguard.rules.hardening import RunsAsRoot
from tests.report_schema import check_cli_output, validate_report


def _report() -> dict[str, Any]:
    finding = RunsAsRoot.finding(
        "The image runs as root.",
        locations=[Location(path="Dockerfile", line=3, dependency_path=("project", "x==1"))],
        fix="Add `USER 10001`.",
    )
    sources = [
        Source.ok("file", "Dockerfile"),
        Source.skipped("image", "agent:1", "not asked for"),
        Source.failed("engine", "unix:///x", "refused", error_code="engine-error", retryable=True),
    ]
    doc = json.loads(render(make_report("check", [finding], sources, target="."), Format.JSON))
    assert isinstance(doc, dict)
    return doc


def test_the_schema_ships_in_the_package_and_names_the_version() -> None:
    text = resources.files("agentguard.schemas").joinpath("report-1.json").read_text("utf-8")
    schema = json.loads(text)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$id"] == json_out.SCHEMA == "agentguard.report/1"
    assert schema["properties"]["schema"] == {"const": json_out.SCHEMA}


def test_a_real_report_validates() -> None:
    validate_report(_report())


@pytest.mark.parametrize(
    ("change", "where"),
    [
        (lambda d: d.pop("sources"), "'sources' is a required property"),
        (lambda d: d.update(extra=1), "Additional properties are not allowed"),
        (lambda d: d.update(schema="agentguard.report/2"), "was expected"),
        (lambda d: d["findings"][0].update(severity="severe"), "is not one of"),
        (lambda d: d["findings"][0]["locations"][0].update(line=0), "less than the minimum"),
        (lambda d: d["findings"][0].pop("fingerprint"), "'fingerprint' is a required"),
        (lambda d: d["sources"][2].pop("remedy"), "'remedy' is a required property"),
        (lambda d: d["sources"][0].update(error_code="x"), "should not be valid"),
        (lambda d: d["provenance"].update(made_at="yesterday"), "does not match"),
        (lambda d: d["summary"]["by_severity"].update(worst=1), "is not one of"),
    ],
)
def test_what_the_schema_refuses(change: Any, where: str) -> None:
    doc = copy.deepcopy(_report())
    change(doc)
    with pytest.raises(jsonschema.ValidationError) as err:
        validate_report(doc)
    assert where in str(err.value.message)


def test_every_json_report_built_in_the_tests_is_validated() -> None:
    # the session fixture wraps the JSON writer: a report breaking the schema fails the test
    # that made it, wherever that test is
    bad = RunsAsRoot.finding("x", locations=[Location(path="Dockerfile", line=0)], fix="y")
    with pytest.raises(jsonschema.ValidationError):
        render(make_report("check", [bad], []), Format.JSON)
    with pytest.raises(jsonschema.ValidationError):
        json_out.report_to_json(make_report("check", [bad], []))


def test_child_process_output_is_validated(tmp_path: Path) -> None:
    good = json.dumps(_report())
    check_cli_output(["check", ".", "--format", "json"], good, None)
    with pytest.raises(jsonschema.ValidationError):
        check_cli_output(["check", ".", "--format", "json"], json.dumps({"schema": 1}), None)
    (tmp_path / "r.json").write_text(json.dumps({"schema": 1}))
    with pytest.raises(jsonschema.ValidationError):
        check_cli_output(["check", "-f", "json", "-o", "r.json"], "", tmp_path)
    check_cli_output(["check", "--format", "text"], "not json", None)  # text is not checked
