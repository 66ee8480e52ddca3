"""AG4xx: the container-hardening rule classes -- user, secrets, privileges, namespaces,
root filesystem. The checks that emit them are in :mod:`.hardening`.

The classes are shared: the image/container inspector emits them from
:class:`~agentguard.facts.image.ImageFacts` and
:class:`~agentguard.facts.image.ContainerFacts`, and the agent-config rules emit the
same classes from compose/devcontainer/Dockerfile facts.
"""

from __future__ import annotations

from agentguard.findings import Severity
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
    service's environment. A pass-through (`$VAR`, `${VAR}`), an empty value, or a
    placeholder still to be filled in (`<YOUR_TOKEN>`, `xxx`, `sk-xxxx`,
    `your-api-key-here`) is not a secret. The value is never shown: the finding names the variable, where it was
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
    Reports a container (or compose service) with `privileged: true`, and a devcontainer
    with a feature that makes it privileged (`docker-in-docker`, which starts its own
    engine inside).

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
