"""The capability map's parts of a Kubernetes container an agent runs in: its runner
(workload, container, securityContext and serviceAccount in words), its volumes (hostPath,
the Docker socket, secrets and configMaps mounted), its secrets by name (``secretKeyRef``,
``envFrom``, secret volumes), its network (the pod's or the host's) and the hazards the
Kubernetes rules report on it. Facts in, records out; no I/O, no gatherer."""

from __future__ import annotations

import posixpath
from collections.abc import Sequence

from agentguard.facts.capabilities import (
    EMPTY,
    HOST_FOLDER,
    KUBERNETES,
    UNKNOWN,
    Evidence,
    Hazard,
    PathAccess,
    Runner,
    SecretRef,
)
from agentguard.facts.host_paths import sensitive_reason, socket_reason
from agentguard.facts.k8s import NOT_A_NAME, K8sContainer, K8sVolume
from agentguard.findings import Confidence

TOKEN_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"


def containers_at(containers: Sequence[K8sContainer], path: str, line: int) -> list[K8sContainer]:
    """The containers of manifest ``path`` whose own text holds ``line`` (from its first
    line to its :attr:`~K8sContainer.end`): a line of another document or of the pod's
    other keys (a ConfigMap's script) is no container's command. Two that hold it (flow
    style on one line): both."""
    return [
        c for c in containers
        if c.path == path and c.line <= line and (c.end is None or line <= c.end)
    ]  # fmt: skip


def runner_name(c: K8sContainer) -> str:
    return f"{c.workload} container {c.name}"


def k8s_runner(
    c: K8sContainer, confidence: Confidence, how: str, more: tuple[Evidence, ...] = (),
    dockerfile: str | None = None,
) -> Runner:  # fmt: skip
    """The container as a runner: how it was joined, then its securityContext and
    serviceAccount in words."""
    where = Evidence(c.path, c.line, f"container {c.name} of {c.workload}")
    words = [how, *security_words(c)] if how else security_words(c)
    return Runner(KUBERNETES, runner_name(c), (where, *more), confidence,
                  how="; ".join(words), image=c.image, dockerfile=dockerfile)  # fmt: skip


def security_words(c: K8sContainer) -> list[str]:
    """What its securityContext and pod spec grant, in words (unset: Kubernetes' default)."""
    out: list[str] = []
    if c.privileged is True:
        out.append("privileged")
    elif c.privileged not in (None, False):
        out.append("privileged: unknown (not a boolean)")
    if c.run_as_user == 0:
        out.append("runs as root (runAsUser 0)")
    elif c.run_as_user is None and c.run_as_non_root is not True:
        out.append("its user is the image's (runAsUser unset)")
    if c.allow_privilege_escalation is not False:
        out.append("privilege escalation allowed" if c.allow_privilege_escalation is True
                   else "privilege escalation not turned off")  # fmt: skip
    if c.cap_add:
        out.append(f"adds capabilities {', '.join(c.cap_add)}")
    out += [f"shares the host's {n}" for n, on in
            (("network", c.host_network), ("PIDs", c.host_pid), ("IPC", c.host_ipc)) if on]  # fmt: skip
    account = _account(c)
    token = {True: "its token mounted", False: "its token not mounted",
             None: "its token mounted unless the account says otherwise"}[c.automount_token]  # fmt: skip
    out.append(f"serviceAccount {account} ({token})")
    return out


def _volume_path(c: K8sContainer, vol: K8sVolume | None, mount: str, read_only: object,
                 line: int | None) -> PathAccess:  # fmt: skip
    ev = (Evidence(c.path, line or c.line, f"{vol.name if vol else '?'} -> {mount}"),)
    writable = None if not isinstance(read_only, bool) else not read_only
    conf = Confidence.HIGH if isinstance(read_only, bool) else Confidence.LOW
    if vol is None:
        return PathAccess(UNKNOWN, None, mount, writable, ev, Confidence.LOW)
    if vol.kind == "hostPath":
        sensitive = socket_reason(vol.host_path) or sensitive_reason(vol.host_path)
        return PathAccess("hostPath", vol.host_path, mount, writable, ev, conf, sensitive)
    return PathAccess(vol.kind, vol.source or vol.name, mount, writable, ev, conf)


def _account(c: K8sContainer) -> str:
    if c.service_account == NOT_A_NAME:
        return "unknown (serviceAccountName is not a name)"
    return c.service_account or "default"


def k8s_paths(c: K8sContainer) -> list[PathAccess]:
    """Each volume mounted in the container, joined to its volume (a mount whose volume the
    pod does not declare: its kind unknown), and the service account's token."""
    volumes = {v.name: v for v in c.volumes}
    out = [_volume_path(c, volumes.get(m.volume), m.mount_path, m.read_only, m.line)
           for m in c.mounts]  # fmt: skip
    if c.automount_token is not False:
        account = _account(c)
        ev = (Evidence(c.path, c.line, f"serviceAccount {account}"),)
        conf = Confidence.HIGH if c.automount_token else Confidence.MEDIUM
        if c.service_account == NOT_A_NAME:
            conf = Confidence.LOW
        out.append(PathAccess("serviceAccountToken", account, TOKEN_PATH, False, ev, conf))
    return out


def k8s_secrets(c: K8sContainer) -> tuple[SecretRef, ...]:
    """The secrets its process gets, by name: ``secretKeyRef`` env, ``envFrom`` a secret
    (its keys are not read: the secret's name), secret volumes."""
    out: list[SecretRef] = []
    for name, what, line in c.secret_env:
        out.append(SecretRef(name, f"env from {what}", (Evidence(c.path, line or c.line, name),)))
    for kind, name, line in c.env_from:
        if kind == "secretRef":
            ev = (Evidence(c.path, line or c.line, f"envFrom secretRef {name}"),)
            out.append(SecretRef(name, "envFrom: every key of secret " + name, ev))
    volumes = {v.name: v for v in c.volumes}
    for m in c.mounts:
        vol = volumes.get(m.volume)
        if vol is not None and vol.kind == "secret":
            ev = (Evidence(c.path, m.line or c.line, f"{vol.name} -> {m.mount_path}"),)
            out.append(SecretRef(vol.source or vol.name, f"secret volume at {m.mount_path}", ev))
    return tuple(out)


def k8s_network(c: K8sContainer) -> tuple[str, Evidence]:
    line = c.line_of("hostNetwork") if c.host_network else c.line
    if c.host_network:
        return "host", Evidence(c.path, line, "hostNetwork: true")
    return "pod", Evidence(c.path, line, "the pod's network (hostNetwork not set)")


def k8s_hazards(c: K8sContainer) -> tuple[Hazard, ...]:
    """What the Kubernetes rules report on the container (AG403 privileged, AG405 host
    namespaces), drawn on the map (the mounts' hazards come from its paths)."""
    out: list[Hazard] = []
    if c.privileged is True:
        out.append(
            Hazard(
                "AG403",
                "runs privileged",
                Evidence(c.path, c.line_of("privileged"), "privileged: true"),
            )
        )
    for key, on, what in (("hostNetwork", c.host_network, "network"),
                          ("hostPID", c.host_pid, "PIDs"), ("hostIPC", c.host_ipc, "IPC")):  # fmt: skip
        if on:
            out.append(
                Hazard(
                    "AG405",
                    f"shares the host's {what}",
                    Evidence(c.path, c.line_of(key), f"{key}: true"),
                )
            )
    return tuple(out)


def k8s_holds_at(
    workdir: str, c: K8sContainer
) -> tuple[str, str | None, tuple[str, ...], tuple[Evidence, ...], str]:
    """What is at ``workdir`` in the container: the volume mounted there, or unknown."""
    volumes = {v.name: v for v in c.volumes}
    for m in c.mounts:
        if posixpath.normpath(m.mount_path) != posixpath.normpath(workdir):
            continue
        vol = volumes.get(m.volume)
        ev = (Evidence(c.path, m.line or c.line, f"{m.volume} -> {m.mount_path}"),)
        if vol is not None and vol.kind == "hostPath":
            return (
                HOST_FOLDER,
                vol.host_path,
                (),
                ev,
                f"host folder {vol.host_path} is mounted there",
            )
        if vol is not None and vol.kind == "emptyDir":
            return EMPTY, None, (), ev, "an emptyDir is mounted there"
        kind = vol.kind if vol is not None else "volume the pod does not declare"
        return UNKNOWN, None, (), ev, f"a {kind} is mounted there"
    return UNKNOWN, None, (), (), "what is there is not read (the image decides)"
