"""``kubernetes.yaml``: a Pod with the same meaning as the hardened run configuration.

Merge the pod-level ``securityContext`` and each container into your own workload (a
Deployment's ``spec.template.spec``). Secrets are referenced from a Secret named
``<service>-secrets``; they are never written here. With ``--network none`` a
NetworkPolicy that denies all ingress and egress for the pod follows the Pod.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import yaml

from agentguard.harden.docker_run import argv_of
from agentguard.harden.escape import comment
from agentguard.harden.model import HOME_DIR, HardenedSpec, ServiceSpec

FILE_NAME = "kubernetes.yaml"
_SIZE = re.compile(r"^(\d+(?:\.\d+)?)([bkmgBKMG]?)$")


def quantity(size: str) -> str:
    """A docker size (``1g``, ``512m``) as a Kubernetes quantity (``1Gi``, ``512Mi``)."""
    m = _SIZE.match(size)
    if m is None:
        return size
    number, unit = m.group(1), m.group(2).lower()
    return number + {"": "", "b": "", "k": "Ki", "m": "Mi", "g": "Gi"}[unit]


def _k8s_name(name: str) -> str:
    clean = re.sub(r"[^a-z0-9-]+", "-", name.lower()).strip("-")
    return clean[:63] or "agent"


def container(spec: HardenedSpec, svc: ServiceSpec, image: str | None = None) -> dict[str, Any]:
    name = _k8s_name(svc.name)
    out: dict[str, Any] = {
        "name": name,
        "image": image or svc.image or f"REPLACE-ME/{name}:built",
    }
    entry = argv_of(svc.entrypoint)
    args = argv_of(svc.command)
    if entry:
        out["command"] = entry
    if args:
        out["args"] = args
    out["workingDir"] = spec.workdir
    env: list[dict[str, Any]] = [{"name": "HOME", "value": HOME_DIR}]
    for e in svc.env:
        if e.value is None:
            env.append(
                {
                    "name": e.name,
                    "valueFrom": {"secretKeyRef": {"name": f"{name}-secrets", "key": e.name}},
                }
            )
        else:
            env.append({"name": e.name, "value": e.value})
    out["env"] = env
    out["securityContext"] = {
        "runAsNonRoot": True,
        "runAsUser": spec.uid,
        "runAsGroup": spec.gid,
        "allowPrivilegeEscalation": False,
        "privileged": False,
        "readOnlyRootFilesystem": True,
        "capabilities": {"drop": ["ALL"]},
    }
    out["resources"] = {"limits": {"memory": quantity(spec.memory)}}
    mounts: list[dict[str, Any]] = [
        {"name": _volume_name(t.path), "mountPath": t.path} for t in spec.tmpfs
    ]
    mounts += [
        {"name": f"data-{i}", "mountPath": m.container, "readOnly": True}
        for i, m in enumerate(spec.allow_mounts)
    ]
    mounts += [
        {"name": _k8s_name(v.name), "mountPath": v.target, "readOnly": v.read_only}
        for v in svc.volumes
    ]
    out["volumeMounts"] = mounts
    return out


def _volume_name(path: str) -> str:
    return _k8s_name(path.strip("/").replace("/", "-")) or "root"


def pod(spec: HardenedSpec, svc: ServiceSpec, image: str | None = None) -> dict[str, Any]:
    name = _k8s_name(svc.name)
    volumes: list[dict[str, Any]] = [
        {
            "name": _volume_name(t.path),
            "emptyDir": {"medium": "Memory", "sizeLimit": quantity(t.size)},
        }
        for t in spec.tmpfs
    ]
    volumes += [
        {
            "name": f"data-{i}",
            # the data mounted from the host with --allow-mount; provide it as a volume
            "persistentVolumeClaim": {"claimName": f"{name}-data-{i}", "readOnly": True},
        }
        for i, _m in enumerate(spec.allow_mounts)
    ]
    volumes += [
        {
            "name": _k8s_name(v.name),
            "persistentVolumeClaim": {"claimName": _k8s_name(v.name), "readOnly": v.read_only},
        }
        for v in svc.volumes
    ]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app.kubernetes.io/name": name}},
        "spec": {
            "automountServiceAccountToken": False,
            "enableServiceLinks": False,
            "hostNetwork": False,
            "hostPID": False,
            "hostIPC": False,
            "securityContext": {
                "runAsNonRoot": True,
                "runAsUser": spec.uid,
                "runAsGroup": spec.gid,
                "fsGroup": spec.gid,
                "seccompProfile": {"type": "RuntimeDefault"},
            },
            "containers": [container(spec, svc, image)],
            "volumes": volumes,
        },
    }


def deny_all_policy(svc: ServiceSpec) -> dict[str, Any]:
    name = _k8s_name(svc.name)
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": f"{name}-no-network"},
        "spec": {
            "podSelector": {"matchLabels": {"app.kubernetes.io/name": name}},
            "policyTypes": ["Ingress", "Egress"],
            "ingress": [],
            "egress": [],
        },
    }


def render_kubernetes(
    spec: HardenedSpec, *, header: list[str], images: Mapping[str, str] | None = None
) -> str:
    docs: list[dict[str, Any]] = []
    built = images or {}
    for svc in spec.services:
        docs.append(pod(spec, svc, built.get(svc.name)))
        if spec.network == "none":
            docs.append(deny_all_policy(svc))
    notes = [
        *header,
        "",
        "Kubernetes has no per-pod pids limit: set the kubelet's podPidsLimit "
        f"(the docker config uses --pids-limit {spec.pids}).",
    ]
    for name, tag in sorted(built.items()):
        notes.append(
            f"{name} runs the hardened image {tag} (the agent's code only): build it from the "
            "Dockerfile beside this file and push it where the cluster pulls from."
        )
    if spec.network != "none":
        notes.append(
            f"Network {spec.network!r}: restrict egress with a NetworkPolicy that allows only "
            "your egress proxy; filtering by host name belongs to that proxy or a firewall."
        )
    head = "".join(f"# {comment(n)}\n" if n else "#\n" for n in notes)
    return head + yaml.safe_dump_all(docs, sort_keys=False, default_flow_style=False, width=100)
