"""AG4xx: container hardening -- user, secrets, privileges, namespaces, root filesystem.

The rule classes here are shared: the image/container inspector emits them from
:class:`~agentguard.facts.image.ImageFacts` and
:class:`~agentguard.facts.image.ContainerFacts`, and the agent-config rules emit the
same classes from compose/devcontainer/Dockerfile facts. Pure functions only (no I/O).
"""

from __future__ import annotations

from collections.abc import Sequence

from agentguard.facts.image import normalise_capability as normalise_capability
from agentguard.findings import Confidence, Finding, Fix, Location, Severity
from agentguard.rules.base import Rule, register


@register
class RunsAsRoot(Rule):
    """The agent's container runs as root.

    ## What it does
    Reports an image whose `USER` is unset, `root` or `0` (optionally `0:<group>`), and
    a container whose user (or, when unset, its image's user) is root. A Dockerfile
    whose non-root `USER` is given passwordless sudo (`NOPASSWD: ALL` in a `RUN`), or
    whose root password is emptied (`passwd -d root`), is root as well: any process of
    that user becomes root with `sudo` or `su`.

    A user named by a variable (`USER $APP_USER`, `user: "${UID}:${GID}"`) is read with
    the value the file gives it: a Dockerfile's ENV, or ARG default, in force at that line
    (what a plain build uses; a `--build-arg` that chooses another user is the builder's
    explicit choice), and compose's `${UID:-1000}` as the default it shows. A variable the
    file gives no value is unknown: AG401 at low confidence, saying so, never "not root".

    ## Why is this bad?
    Root inside the container can change every file the container can see, install
    tools, and, together with a mount or a capability, reach the host. An agent that
    runs code should hold as little as possible.

    ## Example
    ```dockerfile
    FROM python:3.12-slim
    RUN pip install claude-agent-sdk
    CMD ["python", "agent.py"]
    ```

    ## Use instead
    Create an unprivileged user and switch to it:
    ```dockerfile
    RUN useradd --uid 10001 --create-home agent
    USER 10001:10001
    ```
    """

    id = "AG401"
    name = "runs-as-root"
    title = "Runs as root"
    default_severity = Severity.MEDIUM
    family = "hardening"


@register
class LiteralSecret(Rule):
    """A literal secret is set in ENV, the build history or a compose environment.

    ## What it does
    Reports environment variables whose name says secret (`*_API_KEY`, `*_TOKEN`,
    `*_SECRET`, `*PASSWORD*`, ...) or whose value looks like a known key format
    (`sk-...`, `ghp_...`, `AKIA...`), set in the image config, in a build history
    `created_by` line (`ENV`, `ARG`, `RUN export X=...`), or in a container's or compose
    service's environment. A pass-through (`$VAR`, `${VAR}`) or an empty value is not
    a secret. The value is never shown: the finding names the variable, where it was
    set, and at most a short hash prefix of the value.

    ## Why is this bad?
    Image config and history are readable by anyone who can pull the image, and the
    agent itself can read its environment and repeat it. A key baked into a layer stays
    there after a later layer unsets it.

    ## Example
    ```dockerfile
    ENV ANTHROPIC_API_KEY=sk-ant-api03-...
    ```

    ## Use instead
    Inject secrets at run time from a secret store, never at build time:
    ```sh
    docker run --env ANTHROPIC_API_KEY agent-image    # passed through from the caller
    ```
    For build steps that need a secret, use `RUN --mount=type=secret,id=...`. Rotate any
    key that was baked into an image.
    """

    id = "AG402"
    name = "literal-secret"
    title = "Literal secret in environment or build history"
    default_severity = Severity.CRITICAL
    family = "hardening"


@register
class PrivilegedContainer(Rule):
    """The container runs privileged.

    ## What it does
    Reports a container (or compose service) with `privileged: true`.

    ## Why is this bad?
    A privileged container has every capability and every host device; escaping to the
    host is a matter of mounting its disk. An agent never needs this.

    ## Example
    ```sh
    docker run --privileged agent-image
    ```

    ## Use instead
    Remove `--privileged`. If one capability is truly needed, add that one with
    `--cap-add` after review, and drop all others with `--cap-drop ALL`.
    """

    id = "AG403"
    name = "privileged-container"
    title = "Privileged container"
    default_severity = Severity.CRITICAL
    family = "hardening"


@register
class AddedCapabilities(Rule):
    """The container is given Linux capabilities beyond the default set.

    ## What it does
    Reports each capability in `CapAdd` (normalised without the `CAP_` prefix), with a
    higher severity for the ones that reach the host (`SYS_ADMIN`, `SYS_PTRACE`,
    `SYS_MODULE`, `DAC_READ_SEARCH`, `NET_ADMIN`, `ALL`, ...) and a low one for
    `NET_BIND_SERVICE`, which only allows binding ports below 1024 (Kubernetes' restricted
    Pod Security Standard allows adding it).

    ## Why is this bad?
    Each added capability widens what code in the container can do to the kernel and the
    network; several of them are known container escapes.

    ## Example
    ```sh
    docker run --cap-add NET_ADMIN agent-image
    ```

    ## Use instead
    Drop every capability and add none: `--cap-drop ALL`. If one is truly required,
    document why next to the flag.
    """

    id = "AG404"
    name = "added-capabilities"
    title = "Added capabilities"
    default_severity = Severity.HIGH
    family = "hardening"


@register
class HostNamespace(Rule):
    """The container shares the host's network, PID or IPC namespace.

    ## What it does
    Reports `NetworkMode`, `PidMode` or `IpcMode` set to `host`.

    ## Why is this bad?
    With the host network the agent reaches every service bound to the host's loopback
    (databases, metadata endpoints, the engine's TCP port); with the host PID namespace
    it sees and can signal every host process and read their environments; with host
    IPC it can read shared memory of host processes.

    ## Example
    ```sh
    docker run --network host --pid host agent-image
    ```

    ## Use instead
    Use the default private namespaces; publish only the ports you need (`-p 8080:8080`)
    and give the agent a dedicated network with an egress policy.
    """

    id = "AG405"
    name = "host-namespace"
    title = "Host network, PID or IPC namespace"
    default_severity = Severity.HIGH
    family = "hardening"


@register
class WritableRootFilesystem(Rule):
    """The container's root filesystem is writable.

    ## What it does
    Reports a container (or compose service) whose root filesystem is not mounted
    read-only (`ReadonlyRootfs` false or unset).

    ## Why is this bad?
    An agent that can write anywhere can install tools, change the code it runs, and
    leave something behind for the next step. A read-only root turns those into errors
    you can see.

    ## Example
    ```sh
    docker run agent-image
    ```

    ## Use instead
    Run with a read-only root and give the agent writable scratch space explicitly:
    ```sh
    docker run --read-only --tmpfs /tmp -v agent-scratch:/work agent-image
    ```
    """

    id = "AG406"
    name = "writable-root-filesystem"
    title = "Root filesystem not read-only"
    default_severity = Severity.LOW
    family = "hardening"


@register
class NewPrivilegesAllowed(Rule):
    """The container does not set `no-new-privileges`.

    ## What it does
    Reports a container (or compose service) whose security options do not include
    `no-new-privileges` (or `no-new-privileges:true`).

    ## Why is this bad?
    Without it, a setuid binary in the image (or one the agent writes) can raise the
    process's privileges back to root even after you dropped them with `USER`.

    ## Example
    ```sh
    docker run --user 10001 agent-image
    ```

    ## Use instead
    ```sh
    docker run --user 10001 --security-opt no-new-privileges agent-image
    ```
    """

    id = "AG407"
    name = "new-privileges-allowed"
    title = "no-new-privileges not set"
    default_severity = Severity.LOW
    family = "hardening"


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
