"""Kubernetes manifests: the same AG20x/AG40x rules as compose, with the manifest's lines.

The fail case (a multi-document file as `helm template` writes it) produces exactly the
reviewed findings; the hardened manifest produces none; a Helm template is skipped with
the reason, never a failed source and never "clean".
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

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


# Issue 23 items 7 and 8: the same privileged Pod with the engine's socket, alone, as the
# item of a `kind: List`, of a List inside a List, as an Argo Rollout's template, and with
# a `{{` in a comment: every one fails the gate with the same findings.
POD_SPEC = """\
containers:
  - name: agent
    image: agent:1
    securityContext:
      privileged: true
    volumeMounts:
      - name: sock
        mountPath: /var/run/docker.sock
volumes:
  - name: sock
    hostPath:
      path: /var/run/docker.sock
"""


def _indent(text: str, n: int) -> str:
    return "".join(" " * n + line if line.strip() else line for line in text.splitlines(True))


ALONE = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: agent\nspec:\n" + _indent(POD_SPEC, 2)
IN_LIST = "apiVersion: v1\nkind: List\nitems:\n  - " + _indent(ALONE, 4).lstrip()
IN_LIST_IN_LIST = "apiVersion: v1\nkind: List\nitems:\n  - " + _indent(IN_LIST, 4).lstrip()
ROLLOUT = (
    "apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata:\n  name: agent\nspec:\n"
    "  replicas: 1\n  template:\n    metadata:\n      labels: {app: agent}\n    spec:\n"
    + _indent(POD_SPEC, 6)
)
COMMENTED = "# {{ not a template }}\n" + ALONE
# what `kubectl apply` reads as the same Pod: the keys quoted, a space before the colon, a
# byte-order mark, JSON (flow style, on one line or pretty-printed, after `---`)
QUOTED = ALONE.replace("apiVersion:", '"apiVersion":').replace("kind:", "'kind':")
SPACED = ALONE.replace("apiVersion:", "apiVersion :")
BOM = "\ufeff" + ALONE


def _as_json(text: str, indent: int | None) -> str:
    import yaml

    return json.dumps(yaml.safe_load(text), indent=indent)


FLOW = "# the agent\n" + _as_json(ALONE, None) + "\n"
PRETTY = "---\n" + _as_json(ALONE, 2) + "\n"


def _gate(tmp_path: Path, text: str) -> tuple[int, list[tuple[str, str]]]:
    from tests.inspect.engine_support import inspect_cli, report_of

    (tmp_path / "pod.yaml").write_text(text)
    result = inspect_cli(tmp_path, "--format", "json")
    report = report_of(result)
    sources = {(s["name"], s["status"]) for s in report["sources"] if s["kind"] == "file"}
    assert sources == {("pod.yaml", "ok")}
    return result.exit_code, sorted((f["rule_id"], f["severity"]) for f in report["findings"])


def test_a_privileged_pod_with_the_socket_fails_the_gate_in_every_wrapping(
    tmp_path: Path,
) -> None:
    code, alone = _gate(tmp_path, ALONE)
    assert code == 1 and {("AG203", "critical"), ("AG403", "critical")} <= set(alone), alone
    for text in (IN_LIST, IN_LIST_IN_LIST, ROLLOUT, COMMENTED):
        assert _gate(tmp_path, text) == (1, alone), text
    for text in (QUOTED, SPACED, BOM, FLOW, PRETTY):  # (each was not read as a manifest)
        assert _gate(tmp_path, text) == (1, alone), text


def test_list_items_keep_their_lines() -> None:
    containers, docs = read_manifests("l.yaml", IN_LIST.encode())
    assert docs == 1
    assert [(c.workload, c.line, c.privileged) for c in containers] == [("Pod/agent", 10, True)]
    assert dict(containers[0].lines)["privileged"] == 13


def test_a_broken_file_with_braces_is_a_template_and_a_parsed_one_is_read() -> None:
    from agentguard.inspect.project.k8s_facts import TemplatedManifest, read_manifest_file

    with pytest.raises(TemplatedManifest):  # a file that does not parse and holds {{
        read_manifests("t.yaml", (ALONE + "{{- end }}\n").encode())
    # `kubectl apply` deploys a file that parses as written: `{{` in a value (a ConfigMap's
    # alert template, an annotation) never hides the privileged pod beside it
    quoted = ALONE.replace("  name: agent\n", '  name: agent\n  annotations: {a: "{{ x }}"}\n')
    found = read_manifest_file("t.yaml", quoted.encode())
    assert found.braces and [c.privileged for c in found.containers] == [True]


def test_braces_in_a_value_do_not_pass_the_gate(tmp_path: Path) -> None:
    code, alone = _gate(tmp_path, ALONE)
    config_map = 'apiVersion: v1\nkind: ConfigMap\ndata:\n  alert: "{{ $labels.instance }}"\n'
    assert _gate(tmp_path, ALONE + "---\n" + config_map) == (code, alone)


def test_a_typed_list_s_items_without_kind_are_of_its_kind() -> None:
    data = (
        "apiVersion: v1\nkind: PodList\nitems:\n  - metadata: {name: x}\n"
        "    spec: {containers: [{name: a, image: b, securityContext: {privileged: true}}]}\n"
    )
    containers, _docs = read_manifests("n.yaml", data.encode())
    assert [(c.workload, c.privileged) for c in containers] == [("Pod/x", True)]
