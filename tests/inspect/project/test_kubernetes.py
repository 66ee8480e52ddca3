"""Kubernetes manifests: the same AG20x/AG40x rules as compose, with the manifest's lines.

The fail case (a multi-document file as `helm template` writes it) produces exactly the
reviewed findings; the hardened manifest produces none; a Helm template is skipped with
the reason, never a failed source and never "clean".
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from agentguard.findings import SourceStatus
from agentguard.inspect.project.k8s_facts import read_manifests
from agentguard.inspect.project.lined import DocumentError
from tests.inspect.project.support import FIXTURES, finding_json, scan

CASES = FIXTURES / "kubernetes"


def _container_findings(case: Path) -> list[dict[str, object]]:
    findings, sources = scan(case)
    assert all(s.status is SourceStatus.OK for s in sources), sources
    return [finding_json(f) for f in findings if f.rule_id[:3] in ("AG2", "AG4")]


def test_a_risky_deployment_reports_exactly_the_reviewed_findings() -> None:
    case = CASES / "fail" / "agent-deployment"
    found = _container_findings(case)
    path = case / "expected.json"
    if os.environ.get("AGENTGUARD_UPDATE_SNAPSHOTS") == "1":
        path.write_text(json.dumps(found, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    assert found == json.loads(path.read_text(encoding="utf-8"))
    rules = {f["rule_id"] for f in found}
    assert {"AG202", "AG203", "AG204", "AG401", "AG402", "AG403", "AG404", "AG405"} <= rules


def test_the_cron_job_with_a_hardened_context_adds_nothing() -> None:
    found = _container_findings(CASES / "fail" / "agent-deployment")
    assert not [f for f in found if "CronJob" in str(f["message"])]


def test_a_hardened_manifest_reports_nothing() -> None:
    assert _container_findings(CASES / "pass" / "hardened") == []


def test_a_helm_template_is_skipped_with_the_reason() -> None:
    findings, sources = scan(CASES / "skipped" / "helm-chart")
    skipped = [s for s in sources if s.status is SourceStatus.SKIPPED]
    assert [s.name for s in skipped] == ["templates/deployment.yaml"]
    assert "helm template" in (skipped[0].reason or "")
    assert [f for f in findings if f.rule_id[:3] in ("AG2", "AG4")] == []


def test_a_workload_without_a_pod_spec_is_an_error_with_its_line() -> None:
    data = b"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\nspec:\n  replicas: 2\n"
    try:
        read_manifests("d.yaml", data)
    except DocumentError as exc:
        assert "no pod spec" in str(exc)
        assert exc.line == 5
    else:
        raise AssertionError("a Deployment without a pod template must not read as clean")


def test_other_kinds_are_not_workloads() -> None:
    data = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: b\n"
    assert read_manifests("c.yaml", data) == ([], 1)
