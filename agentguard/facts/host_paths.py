"""What a host path written in a compose file, a devcontainer or a container's mounts is:
the home-folder spellings, the Docker socket, the project itself, a credentials or system
folder. Classification of a path as written, shared by the capability model (its
``PathAccess.sensitive``) and the AG2xx mount rules; no judgement, no I/O."""

from __future__ import annotations

import itertools
import posixpath
import re
from collections.abc import Collection

_HOME = re.compile(
    r"^(~|\$HOME|\$\{HOME\}|\$\{localEnv:HOME\}(\$\{localEnv:USERPROFILE\})?|"
    r"\$\{localEnv:USERPROFILE\}|\$\{env:HOME\}|%USERPROFILE%)(?=/|$)"
)


def host_path(source: str | None) -> str | None:
    """A host path with the home-folder spellings of compose/devcontainer written as ``~``."""
    if source is None:
        return None
    return _HOME.sub("~", source.strip(), count=1)


def norm(path: str | None) -> str | None:
    if path is None or not path.strip():
        return None
    return posixpath.normpath(path.strip())


def is_docker_socket(path: str | None) -> bool:
    p = norm(path)
    return p is not None and posixpath.basename(p) in _SOCKET_NAMES


# the host folders that hold an engine's socket: mounting one is mounting the socket (AG203)
SOCKET_DIRS = frozenset({"/var/run", "/run", "/var/run/docker", "/run/docker"})
DOCKER_SOCKET = "docker socket"  # the map's mark of a path that is (or holds) one


def socket_reason(path: str | None) -> str | None:
    """The map's mark of a host path that is an engine's socket, or the folder holding it
    (None otherwise): both are AG203's."""
    if is_docker_socket(path):
        return DOCKER_SOCKET
    if norm(path) in SOCKET_DIRS:
        return f"{DOCKER_SOCKET} (the folder holding it)"
    return None


# the sockets of container engines and runtimes: whoever reaches one starts containers with
# the host's files (CRI-O and cri-dockerd are the runtimes a Kubernetes node talks to)
_SOCKET_NAMES = frozenset(
    {"docker.sock", "containerd.sock", "podman.sock", "dockershim.sock"}
    | {"crio.sock", "cri-dockerd.sock"}
)


# Host sources that are the project itself, whatever the working directory.
_PROJECT_SOURCES = frozenset(
    {".", "..", "$PWD", "${PWD}", "${localWorkspaceFolder}", "${containerWorkspaceFolder}"}
)


def holds_project(source: str | None, contexts: Collection[str] = ()) -> bool:
    """Whether a bind mount's host source is the project: ``.``, ``$PWD``,
    ``${localWorkspaceFolder}``, or a build context of the service (``contexts``)."""
    if source is None:
        return False
    src = source.rstrip("/") or "/"
    if src.startswith("./"):
        src = src[2:] or "."
    return src in _PROJECT_SOURCES or src in {c.rstrip("/").removeprefix("./") for c in contexts}


_HOME_ROOTS = ("/home", "/Users")


_CREDENTIAL_PARTS = frozenset(
    {".ssh", ".aws", ".claude", ".kube", ".docker", ".gnupg", ".azure", ".netrc", ".pypirc"}
    | {".git-credentials", ".npmrc", ".claude.json", ".codex", ".gemini"}
    | {".anthropic", ".openhands", ".openhands-state", ".cursor", ".aider"}
)


_CREDENTIAL_PAIRS = frozenset({(".config", "gcloud"), (".config", "gh"), (".config", "claude")})


_SYSTEM_PATHS = frozenset({"/", "/etc", "/root", "/home", "/Users", "/proc", "/sys", "/boot"})


# (a node's kubelet and containerd folders hold every pod's secrets, tokens and layers)
_SYSTEM_PATHS_BELOW = (
    "/etc/", "/root/", "/proc/", "/sys/", "/boot/", "/var/lib/docker",
    "/var/lib/kubelet", "/var/lib/containerd",
)  # fmt: skip


_BENIGN_ETC = frozenset({"/etc/localtime", "/etc/timezone", "/etc/hosts", "/etc/resolv.conf"})


def sensitive_reason(source: str | None) -> str | None:
    """Why a host path is sensitive, or None. ``~`` counts as a home folder."""
    src = norm(source)
    if src is None:
        return None
    if src in _BENIGN_ETC:
        return None
    parts = [p for p in src.split("/") if p]
    if src == "~" or (src.startswith("~/") and len(parts) == 1):
        return "home folder"
    for part in parts:
        if part in _CREDENTIAL_PARTS:
            return f"credentials folder {part}"
    for a, b in itertools.pairwise(parts):
        if (a, b) in _CREDENTIAL_PAIRS:
            return f"credentials folder {a}/{b}"
    if src in _SYSTEM_PATHS or src.startswith(_SYSTEM_PATHS_BELOW):
        return "the host's root filesystem" if src == "/" else f"system path {src}"
    if len(parts) == 2 and "/" + parts[0] in _HOME_ROOTS:
        return "home folder"
    return None
