"""The fleet recipes (docs/fleet.md) pass agentguard's own gate with no finding, are valid
against the GitHub Actions and Kubernetes schemas, and keep the hardening they promise."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent
KUBE = REPO / "recipes" / "kubernetes"
WORKFLOW = REPO / ".github" / "workflows" / "agentguard-fleet.yml"
MANIFESTS = sorted(KUBE.glob("*.yaml"))
BIN = Path(sys.executable).parent


def documents(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d]


def check_report(project: Path) -> dict[str, Any]:
    out = project.parent / "report.json"
    result = subprocess.run(
        [str(BIN / "agentguard"), "check", str(project), "--format", "json", "--output", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    report: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return report


def test_the_recipes_pass_agentguards_own_gate_with_no_finding(tmp_path: Path) -> None:
    project = tmp_path / "fleet"
    shutil.copytree(KUBE, project / "recipes" / "kubernetes")
    shutil.copytree(WORKFLOW.parent, project / ".github" / "workflows")
    report = check_report(project)
    assert report["findings"] == []
    sources = {s["name"]: s for s in report["sources"]}
    # the pod manifests were read, not skipped: "no finding" is a verdict on them
    for name in ("agentguard-inspect-job.yaml", "agentguard-inspect-cronjob.yaml"):
        source = sources[f"recipes/kubernetes/{name}"]
        assert source["status"] == "ok", source
        assert "Kubernetes manifest" in source["reason"]
    assert not [s for s in report["sources"] if s["status"] == "failed"]


@pytest.mark.parametrize("path", MANIFESTS, ids=[p.name for p in MANIFESTS])
def test_the_manifests_are_valid_kubernetes(path: Path) -> None:
    for doc in documents(path):
        kubernetes_validate.validate(doc, "1.33", strict=True)


def pod_spec(doc: dict[str, Any]) -> dict[str, Any]:
    if doc["kind"] == "CronJob":
        doc = doc["spec"]["jobTemplate"]
    spec: dict[str, Any] = doc["spec"]["template"]["spec"]
    return spec


def test_the_job_and_the_cronjob_run_the_same_hardened_pod() -> None:
    (job,) = documents(KUBE / "agentguard-inspect-job.yaml")
    (cron,) = documents(KUBE / "agentguard-inspect-cronjob.yaml")
    assert (job["kind"], cron["kind"]) == ("Job", "CronJob")
    pod = pod_spec(job)
    assert pod == pod_spec(cron)
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] != 0
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    (container,) = pod["containers"]
    ctx = container["securityContext"]
    assert ctx["readOnlyRootFilesystem"] is True
    assert ctx["allowPrivilegeEscalation"] is False
    assert ctx["capabilities"] == {"drop": ["ALL"]}
    assert "limits" in container["resources"]
    writable = {m["mountPath"] for m in container["volumeMounts"] if not m.get("readOnly")}
    volumes = {v["name"]: v for v in pod["volumes"]}
    for mount in container["volumeMounts"]:
        if mount["mountPath"] in writable:
            kind = set(volumes[mount["name"]]) - {"name"}
            assert kind <= {"emptyDir", "persistentVolumeClaim"}, mount
    assert not any("hostPath" in v for v in pod["volumes"])


def test_the_service_account_can_only_read_pods() -> None:
    docs = documents(KUBE / "agentguard-rbac.yaml")
    (role,) = [d for d in docs if d["kind"] == "Role"]
    assert role["rules"] == [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]
    assert not [d for d in docs if d["kind"] in ("ClusterRole", "ClusterRoleBinding")]
    (job,) = documents(KUBE / "agentguard-inspect-job.yaml")
    (account,) = [d for d in docs if d["kind"] == "ServiceAccount"]
    assert pod_spec(job)["serviceAccountName"] == account["metadata"]["name"]


def test_the_script_runs_the_real_commands() -> None:
    """The ConfigMap's script is valid sh, inspects offline and exits with the worst code."""
    (config,) = [d for d in documents(KUBE / "agentguard-rbac.yaml") if d["kind"] == "ConfigMap"]
    script = config["data"]["inspect-images.sh"]
    syntax = subprocess.run(["sh", "-n"], input=script, capture_output=True, text=True)
    assert syntax.returncode == 0, syntax.stderr
    assert "agentguard inspect /scratch/image --kind oci --no-lock" in script
    help_text = subprocess.run(
        [str(BIN / "agentguard"), "inspect", "--help"],
        capture_output=True,
        text=True,
        env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"},
    ).stdout
    for flag in ("--kind", "--no-lock", "--fail-on", "--format", "--output", "--quiet"):
        assert flag in help_text, flag


def test_the_workflow_is_valid_and_pins_what_it_runs() -> None:
    result = subprocess.run(
        [
            str(BIN / "check-jsonschema"),
            "--builtin-schema",
            "vendor.github-workflows",
            str(WORKFLOW),
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as true
    assert set(triggers) == {"workflow_call"}
    assert workflow["permissions"] == {"contents": "read"}
    job = workflow["jobs"]["check"]
    assert job["permissions"] == {"contents": "read", "security-events": "write"}
    assert job["strategy"]["fail-fast"] is False
    uses = [s["uses"] for s in job["steps"] if "uses" in s]
    assert uses and all(re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", u) for u in uses), uses
    checkout = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/checkout@"))
    assert checkout["with"]["persist-credentials"] is False
    runs = [s for s in job["steps"] if "run" in s]
    install = next(s for s in runs if "pip install" in s["run"])
    assert "python -I -m pip" in install["run"]
    assert install["working-directory"] == "${{ runner.temp }}"
    check = next(s for s in runs if "agentguard check" in s["run"])
    assert "--no-project-config" in check["run"]
    # values reach the shell through the environment, never spliced into the script
    for step in runs:
        assert "${{" not in step["run"], step["run"]
