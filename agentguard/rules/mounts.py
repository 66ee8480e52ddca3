"""AG2xx (part): what the agent can read -- its working directory and the host folders mounted in.

The rule classes here are shared: the image/container inspector emits them from
:class:`~agentguard.facts.image.ImageFacts` and
:class:`~agentguard.facts.image.ContainerFacts`, and the agent-config rules emit the
same classes from compose/devcontainer files. Pure functions only (no I/O).
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Collection, Sequence

from agentguard.facts.host_paths import (
    SOCKET_DIRS,
    holds_project,
    is_docker_socket,
    norm,
    sensitive_reason,
)
from agentguard.facts.image import ImageFacts, MountFact
from agentguard.findings import Confidence, Finding, Fix, Location, Severity
from agentguard.rules.base import Rule, register


@register
class ProjectInImageWorkdir(Rule):
    """The image's working directory holds a project: source tree, documents, secrets.

    ## What it does
    Lists the files at or below the effective working directory of the image (its
    `WorkingDir`, or the container's) in the final filesystem, whiteouts applied, and
    reports project markers: `.git`, `pyproject.toml`/`package.json`, Markdown
    documents, `.env` files and key files. The evidence names the paths, the layer that
    added them and that layer's `created_by` (for example `COPY . /app`).

    ## Why is this bad?
    An agent reads what sits in its working directory. A planning document or a
    `CLAUDE.md` written for developers is retold as fact; an `.env` or a key file is
    one `cat` away from the model's context and from any tool output.

    ## Example
    ```dockerfile
    WORKDIR /app
    COPY . /app
    ```

    ## Use instead
    Copy only what the agent needs to run (the package or a built wheel) and keep the
    working directory empty or dedicated to the agent's scratch space:
    ```dockerfile
    COPY dist/*.whl /tmp/
    RUN pip install --require-hashes -r /tmp/requirements.lock /tmp/*.whl
    WORKDIR /work
    ```
    """

    id = "AG201"
    name = "project-in-image-workdir"
    title = "Working directory of the image holds a project"
    default_severity = Severity.HIGH
    family = "mounts"


@register
class HostFolderAtWorkdir(Rule):
    """A host folder is bind-mounted at, above or below the agent's working directory.

    ## What it does
    Compares every bind mount's destination with the effective working directory of the
    container (or of a compose service / devcontainer): a mount at the working
    directory, at a parent of it, or inside it is reported with the host source, the
    destination and whether it is writable.

    ## Why is this bad?
    The agent sees the host folder as its own project: every document, plan, secret and
    `.git` history in it becomes something the model reads and may repeat. A writable
    mount also lets the agent change files on the host.

    ## Example
    ```sh
    docker run -v "$PWD":/app -w /app agent-image
    ```

    ## Use instead
    Do not mount the project into the agent's working directory. Mount only the folder
    the agent needs, read-only, somewhere else, or give it a dedicated volume:
    ```sh
    docker run -v agent-scratch:/work -w /work agent-image
    ```
    """

    id = "AG202"
    name = "host-folder-at-workdir"
    title = "Host folder mounted into the agent's working directory"
    default_severity = Severity.HIGH
    family = "mounts"


@register
class DockerSocketExposed(Rule):
    """The Docker socket is mounted into the container or present in the image.

    ## What it does
    Reports a mount whose source or destination is a Docker engine socket
    (`/var/run/docker.sock`, `/run/docker.sock`, or any `docker.sock`), a file
    named `docker.sock` inside an image, a devcontainer feature that mounts the socket
    (`docker-outside-of-docker`), and a devcontainer lifecycle command (or a script it
    runs) that opens the socket to every user (`chmod 666 /var/run/docker.sock`). One
    socket reached through a devcontainer's feature and its compose file is one finding
    with both places as evidence.

    ## Why is this bad?
    Access to the engine's socket is root on the host: the agent can start a privileged
    container that mounts `/`. No other hardening survives it.

    ## Example
    ```sh
    docker run -v /var/run/docker.sock:/var/run/docker.sock agent-image
    ```

    ## Use instead
    Remove the socket mount. If the agent must build or run containers, give it a
    separate, rootless engine or a narrowly scoped API proxy that allows only the calls
    it needs.
    """

    id = "AG203"
    name = "docker-socket-exposed"
    title = "Docker socket mounted or present"
    default_severity = Severity.CRITICAL
    family = "mounts"


@register
class SensitiveHostPathMounted(Rule):
    """A sensitive host path is mounted into the container.

    ## What it does
    Reports bind mounts whose host source is `/`, `/etc`, `/root`, a home folder
    (`/home/<user>`, `/Users/<user>`, `~`), or a credentials folder: `.ssh`, `.aws`,
    `.claude`, `.anthropic`, `.codex`, `.gemini`, `.openhands`, `.config/gcloud`, `.kube`,
    `.docker`, `.gnupg`, `.netrc`.

    ## Why is this bad?
    These paths hold the host's credentials and configuration: SSH keys, cloud tokens,
    the agent's own API credentials. An agent that can read them can leak them; a
    writable mount lets it change them.

    ## Example
    ```sh
    docker run -v "$HOME":/home/agent agent-image
    ```

    ## Use instead
    Mount only the folders the agent needs, read-only, and pass credentials as
    short-lived, narrowly scoped secrets (for example `--secret` or an environment
    variable injected at run time from a secret store).
    """

    id = "AG204"
    name = "sensitive-host-path-mounted"
    title = "Sensitive host path mounted"
    default_severity = Severity.HIGH
    family = "mounts"


# ---------------------------------------------------------------------------------------
# Pure functions. The mount checks take plain MountFacts, the effective working
# directory and a `subject` plus a function giving the Location to cite for a mount,
# so the compose/devcontainer rules can call them with their own file:line locations.
# ---------------------------------------------------------------------------------------

MountLocator = Callable[[MountFact], Location]


def effective_workdir(*candidates: str | None) -> str | None:
    """The first set working directory; "" (not set) falls through, and all unset is "/".

    None anywhere before a set value means unknown (the caller could not read it).
    """
    for value in candidates:
        if value is None:
            return None
        if value.strip():
            return posixpath.normpath(value.strip())
    return "/"


def workdir_relation(destination: str, workdir: str) -> str | None:
    """ "at", "above" (the mount contains the workdir) or "below" (inside it); else None."""
    dest = posixpath.normpath(destination)
    if dest == workdir:
        return "at"
    if workdir == "/" or dest.startswith(workdir + "/"):
        return "below"
    if dest == "/" or workdir.startswith(dest + "/"):
        return "above"
    return None


def check_host_folder_at_workdir(
    mounts: Sequence[MountFact],
    workdir: str | None,
    *,
    subject: str,
    locate: MountLocator,
    contexts: Collection[str] = (),
) -> list[Finding]:
    """AG202: bind mounts at, above or below the working directory (not the socket).

    When the working directory is unknown, only a mount of the project itself (``.``,
    ``${localWorkspaceFolder}``, the build context) is reported: a data folder of another
    service or a single file is not what the agent reads as its project."""
    findings: list[Finding] = []
    for m in mounts:
        if m.type != "bind" or is_docker_socket(m.source) or is_docker_socket(m.destination):
            continue
        relation = workdir_relation(m.destination, workdir) if workdir is not None else "unknown"
        if relation is None or (relation == "unknown" and not holds_project(m.source, contexts)):
            continue
        rw = {True: "writable", False: "read-only", None: "writability unknown"}[m.read_write]
        where = {
            "at": f"at the working directory {workdir}",
            "above": f"at {m.destination}, which contains the working directory {workdir}",
            "below": f"at {m.destination}, inside the working directory {workdir}",
            "unknown": f"at {m.destination} (the working directory is unknown)",
        }[relation]
        findings.append(
            HostFolderAtWorkdir.finding(
                f"{subject} mounts the host folder {m.source or '(unknown)'} {where} ({rw}); "
                "the agent reads it as its project.",
                locations=[locate(m)],
                fix=Fix(
                    f"Do not mount {m.source or 'the host folder'} into the agent's working "
                    "directory: mount only what the agent needs, read-only, outside it, or use "
                    "a named volume as scratch space.",
                    snippet="-v agent-scratch:/work -w /work",
                ),
                evidence={
                    "subject": subject,
                    "source": m.source,
                    "destination": m.destination,
                    "workdir": workdir,
                    "relation": relation,
                    "read_write": m.read_write,
                },
                severity=Severity.HIGH,
                confidence=Confidence.LOW if relation == "unknown" else Confidence.HIGH,
            )
        )
    return findings


def check_docker_socket_mounts(
    mounts: Sequence[MountFact], *, subject: str, locate: MountLocator
) -> list[Finding]:
    """AG203: the engine's socket (or the folder holding it) mounted into a container."""
    findings: list[Finding] = []
    for m in mounts:
        direct = is_docker_socket(m.source) or is_docker_socket(m.destination)
        folder = m.type == "bind" and norm(m.source) in SOCKET_DIRS
        if not (direct or folder):
            continue
        sock = next((posixpath.basename(p) for p in (norm(m.source), norm(m.destination))
                     if p is not None and is_docker_socket(p)), "docker.sock")  # fmt: skip
        named = "the Docker socket" if sock == "docker.sock" else f"the engine's socket {sock}"
        what = named if direct else f"{m.source}, the folder holding the Docker socket"
        findings.append(
            DockerSocketExposed.finding(
                f"{subject} mounts {what} ({m.source or '(unknown)'} -> {m.destination}): "
                "whoever reaches it is root on the host.",
                locations=[locate(m)],
                fix=Fix(
                    f"Remove the mount of {m.source or m.destination}; if the agent must run "
                    "containers, give it a separate rootless engine or an API proxy that allows "
                    "only the calls it needs."
                ),
                evidence={
                    "subject": subject,
                    "source": m.source,
                    "destination": m.destination,
                    "read_write": m.read_write,
                    "via_folder": not direct,
                },
                confidence=Confidence.HIGH if direct else Confidence.MEDIUM,
            )
        )
    return findings


def check_image_docker_socket(image: ImageFacts) -> list[Finding]:
    """AG203 for `docker.sock` files inside an image (a socket baked into a layer)."""
    return [
        DockerSocketExposed.finding(
            f"Image {image.target} contains {path}: it expects the Docker socket at that path.",
            locations=[Location(path=path)],
            fix=Fix(f"Remove {path} from the image and do not mount the engine's socket there."),
            evidence={"image": image.target, "path": path},
            severity=Severity.MEDIUM,
        )
        for path in sorted(image.docker_socket_paths)
    ]


def check_sensitive_mounts(
    mounts: Sequence[MountFact], *, subject: str, locate: MountLocator
) -> list[Finding]:
    """AG204: bind mounts of /, /etc, home folders and credentials folders."""
    findings: list[Finding] = []
    for m in mounts:
        if m.type != "bind":
            continue
        reason = sensitive_reason(m.source)
        if reason is None:
            continue
        rw = {True: "writable", False: "read-only", None: "writability unknown"}[m.read_write]
        findings.append(
            SensitiveHostPathMounted.finding(
                f"{subject} mounts {m.source} ({reason}) at {m.destination} ({rw}).",
                locations=[locate(m)],
                fix=Fix(
                    f"Remove the mount of {m.source}; mount only the folder the agent needs, "
                    "read-only, and pass credentials at run time as narrowly scoped secrets."
                ),
                evidence={
                    "subject": subject,
                    "source": m.source,
                    "destination": m.destination,
                    "reason": reason,
                    "read_write": m.read_write,
                },
                severity=Severity.CRITICAL if m.read_write and m.source == "/" else Severity.HIGH,
            )
        )
    return findings


def check_mounts(
    mounts: Sequence[MountFact],
    workdir: str | None,
    *,
    subject: str,
    locate: MountLocator,
    contexts: Collection[str] = (),
) -> list[Finding]:
    """AG202, AG203 and AG204 over one set of mounts (``contexts``: the build contexts)."""
    return (
        check_host_folder_at_workdir(
            mounts, workdir, subject=subject, locate=locate, contexts=contexts
        )
        + check_docker_socket_mounts(mounts, subject=subject, locate=locate)
        + check_sensitive_mounts(mounts, subject=subject, locate=locate)
    )
