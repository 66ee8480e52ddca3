"""AG4xx: container hardening -- user, secrets, privileges, namespaces, root filesystem.

The rule classes (:mod:`.hardening_rules`, re-exported here) are shared: the
image/container inspector emits them from
:class:`~agentguard.facts.image.ImageFacts` and
:class:`~agentguard.facts.image.ContainerFacts`, and the agent-config rules emit the
same classes from compose/devcontainer/Dockerfile facts. Pure functions only (no I/O).
"""

from __future__ import annotations

from collections.abc import Sequence

from agentguard.facts.image import normalise_capability as normalise_capability
from agentguard.findings import Confidence, Finding, Fix, Location, Severity
from agentguard.rules.hardening_rules import AddedCapabilities as AddedCapabilities
from agentguard.rules.hardening_rules import HostNamespace as HostNamespace
from agentguard.rules.hardening_rules import LiteralSecret as LiteralSecret
from agentguard.rules.hardening_rules import NewPrivilegesAllowed as NewPrivilegesAllowed
from agentguard.rules.hardening_rules import PrivilegedContainer as PrivilegedContainer
from agentguard.rules.hardening_rules import RunsAsRoot as RunsAsRoot
from agentguard.rules.hardening_rules import WritableRootFilesystem as WritableRootFilesystem

# ---------------------------------------------------------------------------------------
# Pure functions. Each takes plain facts plus a `subject` (what is being described, e.g.
# "container agent-1" or "service agent") and the Location to cite, so the compose,
# devcontainer and Dockerfile rules can call them with their own file:line locations.
# A value of None means "could not be determined": reported with Confidence.LOW, never
# taken as safe.
# ---------------------------------------------------------------------------------------

ROOT_NAMES = frozenset({"", "0", "root"})
# Capabilities that are known ways out of a container or into the host's network/kernel.
# Capabilities that grant one narrow right and no way out: the ones Kubernetes' restricted
# Pod Security Standard lets a workload add (ingress-nginx's controller, for one, drops ALL
# and adds NET_BIND_SERVICE to listen on 80/443 as a non-root user).
NARROW_CAPS = {
    "NET_BIND_SERVICE": ", which only lets it bind ports below 1024 (the one capability "
    "Kubernetes' restricted Pod Security Standard allows adding).",
}
DANGEROUS_CAPS = frozenset(
    {
        "ALL",
        "SYS_ADMIN",
        "SYS_PTRACE",
        "SYS_MODULE",
        "SYS_RAWIO",
        "SYS_BOOT",
        "SYS_TIME",
        "DAC_READ_SEARCH",
        "DAC_OVERRIDE",
        "NET_ADMIN",
        "NET_RAW",
        "BPF",
        "PERFMON",
        "MKNOD",
        "SETFCAP",
        "LINUX_IMMUTABLE",
        "MAC_ADMIN",
        "MAC_OVERRIDE",
    }
)


def user_is_root(user: str | None) -> bool | None:
    """True for an unset user, `root`, `0`, `root:<group>`, `0:<gid>`; None when unknown.

    A named user other than root is taken as non-root (its uid would need /etc/passwd). A
    variable (``$APP_USER``) or a template's value (``{{ user }}``) is unknown until expanded.
    """
    if user is None or "{{" in user or "$" in user:
        return None
    name = user.strip().split(":", 1)[0]
    return name in ROOT_NAMES


def check_user(
    user: str | None,
    *,
    subject: str,
    location: Location,
    set_where: str,
    unknown_why: str = "",
) -> list[Finding]:
    """AG401 for one effective user. ``set_where`` says where the user came from;
    ``unknown_why`` (for an unknown user) why it could not be determined."""
    root = user_is_root(user)
    if root is False:
        return []
    fix = Fix(
        "Create an unprivileged user and run as it: `USER 10001:10001` in the Dockerfile, "
        'or `--user 10001:10001` / `user: "10001:10001"` where the container is started.',
        snippet="USER 10001:10001",
    )
    if root is None:
        return [
            RunsAsRoot.finding(
                f"The user {subject} runs as could not be determined"
                + (f" ({unknown_why})" if unknown_why else "")
                + "; it may be root.",
                locations=[location],
                fix=fix,
                evidence={"subject": subject, "user": None, "set_where": set_where},
                confidence=Confidence.LOW,
            )
        ]
    shown = user if user else "(not set: root)"
    return [
        RunsAsRoot.finding(
            f"{subject} runs as root (user {shown}, from {set_where}).",
            locations=[location],
            fix=fix,
            evidence={"subject": subject, "user": user, "set_where": set_where},
        )
    ]


def check_privileged(value: bool | None, *, subject: str, location: Location) -> list[Finding]:
    """AG403."""
    if value is False:
        return []
    fix = Fix("Remove `--privileged` (`privileged: true`); add one reviewed capability instead.")
    if value is None:
        return [
            PrivilegedContainer.finding(
                f"Whether {subject} runs privileged could not be determined.",
                locations=[location],
                fix=fix,
                evidence={"subject": subject, "privileged": None},
                confidence=Confidence.LOW,
            )
        ]
    return [
        PrivilegedContainer.finding(
            f"{subject} runs privileged: every capability and every host device.",
            locations=[location],
            fix=fix,
            evidence={"subject": subject, "privileged": True},
        )
    ]


def check_capabilities(
    cap_add: Sequence[str] | None, *, subject: str, location: Location
) -> list[Finding]:
    """AG404, one finding per added capability (high for the known escapes)."""
    fix_text = "Remove `--cap-add {cap}` (`cap_add: [{cap}]`) and run with `--cap-drop ALL`."
    if cap_add is None:
        return [
            AddedCapabilities.finding(
                f"The capabilities added to {subject} could not be determined.",
                locations=[location],
                fix=Fix("Run with `--cap-drop ALL` and add no capabilities."),
                evidence={"subject": subject, "capability": None},
                confidence=Confidence.LOW,
            )
        ]
    findings: list[Finding] = []
    for cap in sorted({normalise_capability(c) for c in cap_add if c.strip()}):
        dangerous = cap in DANGEROUS_CAPS
        narrow = cap in NARROW_CAPS
        findings.append(
            AddedCapabilities.finding(
                f"{subject} is given the capability {cap}"
                + (
                    ", a known way to reach the host or its network."
                    if dangerous
                    else NARROW_CAPS[cap]
                    if narrow
                    else "."
                ),
                locations=[location],
                fix=Fix(
                    "Listen on a port above 1024 and publish it as the low one (`-p 80:8080`), "
                    f"then remove `--cap-add {cap}` (`cap_add: [{cap}]`)."
                    if narrow
                    else fix_text.format(cap=cap),
                    snippet="--cap-drop ALL",
                ),
                evidence={"subject": subject, "capability": cap, "known_escape": dangerous},
                severity=Severity.HIGH
                if dangerous
                else Severity.LOW
                if narrow
                else Severity.MEDIUM,
            )
        )
    return findings


_NAMESPACE_FLAGS = {"network": "--network host", "pid": "--pid host", "ipc": "--ipc host"}


def check_namespaces(
    *,
    network_mode: str | None,
    pid_mode: str | None,
    ipc_mode: str | None,
    subject: str,
    location: Location,
) -> list[Finding]:
    """AG405 for each of network/pid/ipc set to `host` (LOW confidence when unknown)."""
    findings: list[Finding] = []
    for ns, mode in (("network", network_mode), ("pid", pid_mode), ("ipc", ipc_mode)):
        flag = _NAMESPACE_FLAGS[ns]
        fix = Fix(f"Remove `{flag}` (`{ns}_mode: host`); use the container's own {ns} namespace.")
        if mode is None:
            findings.append(
                HostNamespace.finding(
                    f"The {ns} namespace of {subject} could not be determined.",
                    locations=[location],
                    fix=fix,
                    evidence={"subject": subject, "namespace": ns, "mode": None},
                    confidence=Confidence.LOW,
                )
            )
        elif mode.strip().lower() == "host":
            findings.append(
                HostNamespace.finding(
                    f"{subject} shares the host's {ns} namespace ({ns} mode host).",
                    locations=[location],
                    fix=fix,
                    evidence={"subject": subject, "namespace": ns, "mode": "host"},
                )
            )
    return findings


def check_read_only_rootfs(
    value: bool | None, *, subject: str, location: Location
) -> list[Finding]:
    """AG406."""
    if value is True:
        return []
    return [
        WritableRootFilesystem.finding(
            f"The root filesystem of {subject} is writable."
            if value is False
            else f"Whether the root filesystem of {subject} is read-only could not be determined.",
            locations=[location],
            fix=Fix(
                "Run with `--read-only` (`read_only: true`) and give the agent explicit scratch "
                "space: `--tmpfs /tmp` and a volume for its working directory.",
                snippet="--read-only --tmpfs /tmp",
            ),
            evidence={"subject": subject, "read_only_rootfs": value},
            confidence=Confidence.HIGH if value is False else Confidence.LOW,
        )
    ]


def no_new_privileges_set(security_opt: Sequence[str]) -> bool:
    for opt in security_opt:
        norm = opt.strip().lower().replace("=", ":")
        if norm in ("no-new-privileges", "no-new-privileges:true"):
            return True
    return False


def check_no_new_privileges(
    security_opt: Sequence[str] | None, *, subject: str, location: Location
) -> list[Finding]:
    """AG407."""
    if security_opt is not None and no_new_privileges_set(security_opt):
        return []
    return [
        NewPrivilegesAllowed.finding(
            f"{subject} does not set no-new-privileges."
            if security_opt is not None
            else f"The security options of {subject} could not be determined.",
            locations=[location],
            fix=Fix(
                "Run with `--security-opt no-new-privileges` "
                '(`security_opt: ["no-new-privileges:true"]`).',
                snippet="--security-opt no-new-privileges",
            ),
            evidence={
                "subject": subject,
                "security_opt": list(security_opt) if security_opt is not None else None,
            },
            confidence=Confidence.HIGH if security_opt is not None else Confidence.LOW,
        )
    ]
