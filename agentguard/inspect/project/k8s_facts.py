"""Kubernetes manifests: the containers of Pods and of the workloads that make them.

A YAML file (one document or many, as ``helm template`` writes them) whose documents
have ``apiVersion`` and ``kind`` is a manifest; the items of a ``List`` (``kind: List`` or
any ``*List``, nested too) are its objects, as ``kubectl apply`` deploys them. Each
container of a Pod, Deployment, StatefulSet, DaemonSet, ReplicaSet, Job or CronJob, and of
any other kind with a pod template or containers where those kinds keep them (an Argo
``Rollout``, a Knative ``Service``, a custom resource), init containers too, becomes a
:class:`~.engine_model.K8sContainer` with the pod-level security settings folded in (a
container's own ``securityContext`` wins, as in Kubernetes). Other documents are counted,
not read. A file is a template (skipped, never read as clean) only when it does not parse
as YAML and holds ``{{``: a comment does not count, and a file that parses is read as
``kubectl apply`` would deploy it, values holding ``{{`` included (the source says so).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Any

from agentguard.facts.k8s import NOT_A_NAME
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


# a top-level `apiVersion` key as YAML writes it: quoted or not, a space before the colon,
# after a byte-order mark; or a document in flow style (JSON) at a line's start
_TOP_KEY = re.compile(rb"""^(?:\xef\xbb\xbf)?["']?apiVersion["']?[ \t]*:""", re.MULTILINE)
_FLOW_DOC = re.compile(rb"^(?:\xef\xbb\xbf)?(?:---[ \t]+)?\{", re.MULTILINE)


def looks_like_manifest(data: bytes) -> bool:
    """The cheap test: a top-level ``apiVersion`` key and ``kind`` somewhere, in any
    spelling ``kubectl apply`` reads (each search linear in the file)."""
    if b"apiVersion" not in data or b"kind" not in data:
        return False
    return _TOP_KEY.search(data) is not None or _FLOW_DOC.search(data) is not None


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


class TemplatedManifest(Exception):
    """The file is a template (Helm): it does not parse as YAML and holds ``{{``. A ``{{``
    in a comment does not make a plain manifest a template; one in a value of a file that
    parses does not either (``kubectl apply`` deploys it as written: it is read, and the
    source says values hold ``{{``)."""


@dataclass(frozen=True)
class Manifests:
    containers: list[K8sContainer]
    documents: int
    braces: bool  # a key or a value holds `{{` (a Helm template that happens to parse?)


# Where a pod spec sits in a document of a kind not listed above (Argo Rollouts, Knative
# Services, custom resources): the first of these holding a list of containers is read.
_POD_PATHS: tuple[tuple[str, ...], ...] = (
    ("spec", "template", "spec"),
    ("spec", "jobTemplate", "spec", "template", "spec"),
    ("template", "spec"),
    ("spec",),
)
MAX_LIST_DEPTH = 8  # a List inside a List inside ...


def read_manifests(path: str, data: bytes) -> tuple[list[K8sContainer], int]:
    """(containers, documents read). Raises :class:`DocumentError`, or
    :class:`TemplatedManifest` when the file is a template."""
    found = read_manifest_file(path, data)
    return found.containers, found.documents


def read_manifest_file(path: str, data: bytes) -> Manifests:
    """Every container of the file. Raises :class:`DocumentError`, or
    :class:`TemplatedManifest` when it does not parse as YAML and holds ``{{``."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DocumentError(f"not UTF-8 text (byte {exc.start})", code="decode") from None
    try:
        docs = load_yaml_all(text)
    except DocumentError:
        if "{{" in text:
            raise TemplatedManifest() from None
        raise
    out: list[K8sContainer] = []
    for n, doc in enumerate(docs):
        after = min(docs[n + 1].lines.values(), default=None) if n + 1 < len(docs) else None
        spans = _Spans(doc, None if after is None else after - 1)
        for obj, at in _objects(doc.value, (), 0):
            out += _workload(path, doc, obj, at, spans)
    return Manifests(out, len(docs), any(_holds_template(doc.value) for doc in docs))


class _Spans:
    """Where the text of a value ends: the line before the first value after it that is
    not its own (the next container, the pod's volumes, the next item of a List), else the
    document's last line. Lines are known where values start (a block scalar's lines are
    not), so this is where the next one starts."""

    def __init__(self, doc: LinedDoc, doc_end: int | None) -> None:
        self.order = sorted(((line, p) for p, line in doc.lines.items() if p), key=lambda t: t[0])
        self.lines = [line for line, _p in self.order]
        self.doc_end = doc_end

    def end(self, at: KeyPath, line: int) -> int | None:
        """The last line of the value at ``at``, which starts at ``line`` (the values after
        it are passed over once each: its own, then the first that is not)."""
        for k in range(bisect.bisect_right(self.lines, line), len(self.order)):
            later, p = self.order[k]
            if p[: len(at)] != at:
                return later - 1
        return self.doc_end


def _holds_template(value: Any) -> bool:
    """A key or a string value holding ``{{`` (the values are bounded: MAX_NODES)."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            if "{{" in v:
                return True
        elif isinstance(v, dict):
            if any("{{" in k for k in v):
                return True
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return False


def _objects(value: Any, at: KeyPath, depth: int) -> list[tuple[dict[str, Any], KeyPath]]:
    """The objects of a document: itself, or the items of a ``List`` (``kind: List``,
    ``PodList``, ``DeploymentList``, ...), as ``kubectl apply`` deploys them."""
    if not isinstance(value, dict) or not isinstance(value.get("kind"), str):
        return []
    kind = value["kind"]
    items = value.get("items")
    if kind.endswith("List") and isinstance(items, list):
        if depth >= MAX_LIST_DEPTH:
            raise DocumentError(f"Lists nested more than {MAX_LIST_DEPTH} deep", code="too-deep")
        out: list[tuple[dict[str, Any], KeyPath]] = []
        for i, item in enumerate(items):
            if isinstance(item, dict) and "kind" not in item and kind != "List":
                item = {**item, "kind": kind[: -len("List")]}  # a PodList's items are Pods
            out += _objects(item, (*at, "items", i), depth + 1)
        return out
    return [(value, at)]


def _workload(
    path: str, doc: LinedDoc, value: dict[str, Any], at: KeyPath, spans: _Spans
) -> list[K8sContainer]:
    kind = value["kind"]
    name = _get(value, ("metadata", "name"))
    workload = f"{kind}/{name if isinstance(name, str) else '(unnamed)'}"
    if kind in WORKLOAD_KINDS:
        pod_path = (*WORKLOAD_KINDS[kind], "spec")
        pod = _get(value, pod_path)
        if not isinstance(pod, dict):
            raise DocumentError(
                f"{workload}: no pod spec at {'.'.join(pod_path)}",
                line=doc.line(*at, *pod_path),
                code="schema",
            )
        return _containers(path, doc, workload, pod, (*at, *pod_path), spans)
    for pod_path in _POD_PATHS:  # any kind with a pod template or containers
        pod = _get(value, pod_path)
        if isinstance(pod, dict) and isinstance(pod.get("containers"), list):
            return _containers(path, doc, workload, pod, (*at, *pod_path), spans)
    return []


def _containers(
    path: str, doc: LinedDoc, workload: str, pod: dict[str, Any], base: KeyPath,
    spans: _Spans,
) -> list[K8sContainer]:  # fmt: skip
    pod_sc: dict[str, Any] = _mapping(pod.get("securityContext"))
    volumes: list[K8sVolume] = []
    for vol in pod.get("volumes") or ():
        if not isinstance(vol, dict):
            continue
        kinds = [k for k in vol if k != "name"]
        host = _get(vol, ("hostPath", "path"))
        kind = kinds[0] if kinds else "unknown"
        named = _get(vol, (kind, _VOLUME_NAMES[kind])) if kind in _VOLUME_NAMES else None
        volumes.append(
            K8sVolume(
                name=str(vol.get("name")),
                host_path=host if isinstance(host, str) else None,
                kind=kind,
                source=named if isinstance(named, str) else None,
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
            starts = _starts(c, doc, at)
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
                    end=spans.end(at, doc.line(*at) or 1),
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
                    lines=tuple((*lines.items(), *starts.lines)),
                    image=c.get("image") if isinstance(c.get("image"), str) else None,
                    command=starts.command,
                    args=starts.args,
                    secret_env=starts.secret_env,
                    env_from=starts.env_from,
                    service_account=_account(pod),
                    automount_token=pod.get("automountServiceAccountToken")
                    if isinstance(pod.get("automountServiceAccountToken"), bool)
                    else None,
                )
            )
    return out


# a volume kind -> the key that names what it mounts
_VOLUME_NAMES = {
    "secret": "secretName",
    "configMap": "name",
    "persistentVolumeClaim": "claimName",
}
NOT_A_LIST = "<not a list>"


def _account(pod: dict[str, Any]) -> str | None:
    """The pod's service account: None when unset (Kubernetes takes "default"), NOT_A_NAME
    when set to a value that is not a name (unknown: never read as "default")."""
    value = pod.get("serviceAccountName")
    if value is None or value == "":
        value = pod.get("serviceAccount")
    if value is None or value == "":
        return None
    return value if isinstance(value, str) else NOT_A_NAME


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _words(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
        return tuple(str(v) for v in value)
    return (NOT_A_LIST,)


@dataclass(frozen=True)
class _Starts:
    command: tuple[str, ...] | None
    args: tuple[str, ...] | None
    secret_env: tuple[tuple[str, str, int | None], ...]
    env_from: tuple[tuple[str, str, int | None], ...]
    lines: tuple[tuple[str, int], ...]


def _starts(c: dict[str, Any], doc: LinedDoc, at: KeyPath) -> _Starts:
    """What a container starts, and the secrets its environment names (names only)."""
    secret_env: list[tuple[str, str, int | None]] = []
    for n, e in enumerate(c.get("env") or ()):
        ref = _get(e, ("valueFrom", "secretKeyRef"))
        if isinstance(e, dict) and isinstance(e.get("name"), str) and isinstance(ref, dict):
            what = f"secret {ref.get('name', '(unnamed)')} key {ref.get('key', '(unnamed)')}"
            secret_env.append((e["name"], what[:120], doc.line(*at, "env", n)))
    env_from: list[tuple[str, str, int | None]] = []
    for n, e in enumerate(c.get("envFrom") or ()):
        for kind in ("secretRef", "configMapRef"):
            name = _get(e, (kind, "name"))
            if isinstance(name, str):
                env_from.append((kind, name, doc.line(*at, "envFrom", n)))
    lines = tuple(
        (key, line)
        for key in ("image", "command", "args", "env", "envFrom", "workingDir")
        if key in c and (line := doc.line(*at, key)) is not None
    )
    return _Starts(
        _words(c.get("command")),
        _words(c.get("args")),
        tuple(secret_env),
        tuple(env_from),
        lines,
    )
