"""AG20x/AG40x from Kubernetes manifests (pure functions, no I/O).

The same rules as compose and devcontainers, with the manifest's line numbers and fixes
written in Kubernetes terms (a ``securityContext`` key, not a ``docker run`` flag).
"""

from __future__ import annotations

import dataclasses

from agentguard.facts.image import MountFact
from agentguard.facts.k8s import K8sContainer
from agentguard.findings import Finding, Fix, Location
from agentguard.rules.hardening import (
    check_capabilities,
    check_namespaces,
    check_no_new_privileges,
    check_privileged,
    check_read_only_rootfs,
    check_user,
)
from agentguard.rules.mounts import check_mounts
from agentguard.rules.secret_values import check_env_secrets

_FIXES = {
    "AG401": Fix(
        "Set `securityContext.runAsNonRoot: true` and `runAsUser: 10001` on the pod or the "
        "container.",
        snippet="securityContext: {runAsNonRoot: true, runAsUser: 10001}",
    ),
    "AG403": Fix("Remove `securityContext.privileged: true`; add one reviewed capability."),
    "AG404": Fix(
        "Drop every capability and add none: `securityContext.capabilities: {drop: [ALL]}`.",
        snippet="capabilities: {drop: [ALL]}",
    ),
    "AG405": Fix("Remove `hostNetwork`/`hostPID`/`hostIPC` from the pod spec."),
    "AG406": Fix(
        "Set `securityContext.readOnlyRootFilesystem: true` and mount an `emptyDir` where the "
        "agent needs scratch space.",
        snippet="readOnlyRootFilesystem: true",
    ),
    "AG407": Fix(
        "Set `securityContext.allowPrivilegeEscalation: false`.",
        snippet="allowPrivilegeEscalation: false",
    ),
    "AG402": Fix(
        "Move the value into a Secret and reference it: `valueFrom.secretKeyRef`; rotate it.",
        snippet="valueFrom: {secretKeyRef: {name: agent-secrets, key: API_KEY}}",
    ),
    "AG203": Fix("Remove the hostPath volume of the engine's socket."),
    "AG204": Fix(
        "Remove the hostPath volume; pass credentials as a Secret scoped to what the agent needs."
    ),
    "AG202": Fix(
        "Do not mount a host folder at the container's working directory; give the agent an "
        "`emptyDir` as scratch space.",
        snippet="volumes: [{name: scratch, emptyDir: {}}]",
    ),
}


def _user(c: K8sContainer) -> str | None:
    """The user for the shared check: "0" for root, a non-root id, or None: unknown (a
    value that could not be read, or unset: the image's user, which the manifest does not
    show)."""
    if isinstance(c.run_as_user, int) and not isinstance(c.run_as_user, bool):
        return str(c.run_as_user)
    if c.run_as_non_root is True:
        return "10001"  # Kubernetes refuses to start the container as root
    return None


def check_k8s_container(c: K8sContainer) -> list[Finding]:
    subject = f"Kubernetes {c.workload} container {c.name}"

    def at(key: str) -> Location:
        return Location(path=c.path, line=c.line_of(key))

    findings: list[Finding] = []
    volumes = {v.name: v for v in c.volumes}
    mounts: list[MountFact] = []
    where: dict[int, Location] = {}
    for m in c.mounts:
        vol = volumes.get(m.volume)
        if vol is None or vol.host_path is None:
            continue
        ro = m.read_only if isinstance(m.read_only, bool) else None
        fact = MountFact("bind", vol.host_path, m.mount_path, None if ro is None else not ro)
        mounts.append(fact)
        where[id(fact)] = Location(path=c.path, line=m.line or c.line)
    findings += (
        check_mounts(mounts, c.working_dir, subject=subject, locate=lambda m: where[id(m)])
        if c.working_dir
        else [
            f
            for f in check_mounts(mounts, None, subject=subject, locate=lambda m: where[id(m)])
            if f.rule_id != "AG202"  # the working directory is the image's: not known here
        ]
    )
    findings += check_user(
        _user(c), subject=subject, location=at("runAsUser"), set_where="securityContext"
    )
    for name, value, line in c.env:
        if value is not None:
            findings += check_env_secrets(
                [(name, value)],
                subject=subject,
                location=Location(path=c.path, line=line or c.line),
                set_where="the container's env",
            )
    if c.privileged is not None and c.privileged is not False:
        findings += check_privileged(
            c.privileged if isinstance(c.privileged, bool) else None,
            subject=subject,
            location=at("privileged"),
        )
    if c.cap_add:
        findings += check_capabilities(c.cap_add, subject=subject, location=at("capabilities"))
    findings += check_namespaces(
        network_mode="host" if c.host_network else "",
        pid_mode="host" if c.host_pid else "",
        ipc_mode="host" if c.host_ipc else "",
        subject=subject,
        location=at("hostNetwork" if c.host_network else "hostPID" if c.host_pid else "hostIPC"),
    )
    if not c.init:
        findings += check_read_only_rootfs(
            c.read_only_root
            if isinstance(c.read_only_root, bool)
            else False
            if c.read_only_root is None
            else None,
            subject=subject,
            location=at("readOnlyRootFilesystem"),
        )
        escalation = c.allow_privilege_escalation
        findings += check_no_new_privileges(
            ["no-new-privileges:true"]
            if escalation is False
            else []
            if escalation is None or escalation is True
            else None,
            subject=subject,
            location=at("allowPrivilegeEscalation"),
        )
    return [
        dataclasses.replace(f, fix=_FIXES[f.rule_id]) if f.rule_id in _FIXES else f
        for f in findings
    ]
