"""Kubernetes manifests: the containers of Pods and of the workloads that make them.

A YAML file (one document or many, as ``helm template`` writes them) whose documents
have ``apiVersion`` and ``kind`` is a manifest. Each container of a Pod, Deployment,
StatefulSet, DaemonSet, ReplicaSet, Job or CronJob (init containers too) becomes a
:class:`~.engine_model.K8sContainer` with the pod-level security settings folded in
(a container's own ``securityContext`` wins, as in Kubernetes). Documents of other kinds
are counted, not read.
"""

from __future__ import annotations

from typing import Any

from agentguard.inspect.project.engine_model import K8sContainer, K8sMount, K8sVolume
from agentguard.inspect.project.lined import DocumentError, KeyPath, LinedDoc
from agentguard.inspect.project.model import Unknown
from agentguard.inspect.project.yaml_lined import load_yaml_all

WORKLOAD_KINDS = {
    "Pod": (),
    "Deployment": ("spec", "template"),
    "StatefulSet": ("spec", "template"),
    "DaemonSet": ("spec", "template"),
    "ReplicaSet": ("spec", "template"),
    "ReplicationController": ("spec", "template"),
    "Job": ("spec", "template"),
    "CronJob": ("spec", "jobTemplate", "spec", "template"),
}


def looks_like_manifest(data: bytes) -> bool:
    """The cheap test: a top-level ``apiVersion:`` and ``kind:`` somewhere."""
    return (b"\napiVersion:" in data or data.startswith(b"apiVersion:")) and b"kind:" in data


def _get(value: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _bool(value: Any) -> Any:
    if value is None or isinstance(value, bool):
        return value
    return Unknown(str(value)[:40], "not a boolean (templated?)")


def read_manifests(path: str, data: bytes) -> tuple[list[K8sContainer], int]:
    """(containers, documents read). Raises :class:`DocumentError`."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DocumentError(f"not UTF-8 text (byte {exc.start})", code="decode") from None
    out: list[K8sContainer] = []
    docs = load_yaml_all(text)
    for doc in docs:
        value = doc.value
        if not isinstance(value, dict) or not isinstance(value.get("kind"), str):
            continue
        kind = value["kind"]
        if kind not in WORKLOAD_KINDS:
            continue
        name = _get(value, ("metadata", "name"))
        workload = f"{kind}/{name if isinstance(name, str) else '(unnamed)'}"
        pod_path = (*WORKLOAD_KINDS[kind], "spec")
        pod = _get(value, pod_path)
        if not isinstance(pod, dict):
            raise DocumentError(
                f"{workload}: no pod spec at {'.'.join(pod_path)}",
                line=doc.line(*pod_path),
                code="schema",
            )
        out += _containers(path, doc, workload, pod, pod_path)
    return out, len(docs)


def _containers(
    path: str, doc: LinedDoc, workload: str, pod: dict[str, Any], base: KeyPath
) -> list[K8sContainer]:
    pod_sc: dict[str, Any] = _mapping(pod.get("securityContext"))
    volumes: list[K8sVolume] = []
    for vol in pod.get("volumes") or ():
        if not isinstance(vol, dict):
            continue
        kinds = [k for k in vol if k != "name"]
        host = _get(vol, ("hostPath", "path"))
        volumes.append(
            K8sVolume(
                name=str(vol.get("name")),
                host_path=host if isinstance(host, str) else None,
                kind=kinds[0] if kinds else "unknown",
            )
        )
    out: list[K8sContainer] = []
    for group in ("initContainers", "containers"):
        for i, c in enumerate(pod.get(group) or ()):
            if not isinstance(c, dict):
                continue
            at: KeyPath = (*base, group, i)
            sc: dict[str, Any] = _mapping(c.get("securityContext"))

            def pick(key: str, sc: dict[str, Any] = sc) -> Any:
                return sc[key] if key in sc else pod_sc.get(key)

            caps = _get(sc, ("capabilities", "add"))
            mounts = tuple(
                K8sMount(
                    volume=str(m.get("name")),
                    mount_path=str(m.get("mountPath")),
                    read_only=_bool(m.get("readOnly", False)),
                    line=doc.line(*at, "volumeMounts", n),
                )
                for n, m in enumerate(c.get("volumeMounts") or ())
                if isinstance(m, dict) and m.get("mountPath")
            )
            env: list[tuple[str, str | None, int | None]] = []
            for n, e in enumerate(c.get("env") or ()):
                if isinstance(e, dict) and isinstance(e.get("name"), str):
                    literal = e.get("value")
                    env.append(
                        (
                            e["name"],
                            str(literal) if literal is not None and "valueFrom" not in e else None,
                            doc.line(*at, "env", n),
                        )
                    )
            user = pick("runAsUser")
            lines: dict[str, int] = {
                key: doc.line(*at, "securityContext", key) or doc.line(*at) or 1
                for key in (
                    "runAsUser",
                    "runAsNonRoot",
                    "privileged",
                    "allowPrivilegeEscalation",
                    "readOnlyRootFilesystem",
                    "capabilities",
                )
                if key in sc
            }
            for key in ("hostNetwork", "hostPID", "hostIPC"):
                if key in pod:
                    lines[key] = doc.line(*base, key) or 1
            out.append(
                K8sContainer(
                    path=path,
                    workload=workload,
                    name=str(c.get("name", f"{group}[{i}]")),
                    line=doc.line(*at) or 1,
                    init=group == "initContainers",
                    working_dir=c.get("workingDir")
                    if isinstance(c.get("workingDir"), str)
                    else None,
                    run_as_user=user
                    if isinstance(user, int) or user is None
                    else Unknown(str(user)[:40], "not a number"),
                    run_as_non_root=_bool(pick("runAsNonRoot")),
                    privileged=_bool(sc.get("privileged")),
                    allow_privilege_escalation=_bool(sc.get("allowPrivilegeEscalation")),
                    read_only_root=_bool(sc.get("readOnlyRootFilesystem")),
                    cap_add=tuple(str(x) for x in caps) if isinstance(caps, list) else (),
                    host_network=pod.get("hostNetwork") is True,
                    host_pid=pod.get("hostPID") is True,
                    host_ipc=pod.get("hostIPC") is True,
                    mounts=mounts,
                    volumes=tuple(volumes),
                    env=tuple(env),
                    lines=tuple(lines.items()),
                )
            )
    return out
