"""devcontainer.json facts: the workspace mount and folder, mounts, runArgs, env, users.

Filled by :func:`agentguard.inspect.project.devcontainer_facts.read_devcontainer`. A
devcontainer that is not compose-based always bind-mounts the checkout: without a
``workspaceMount`` the tools mount ``${localWorkspaceFolder}`` at
``/workspaces/${localWorkspaceFolderBasename}`` and make that the working folder. That
implicit mount is recorded as such (``origin="default workspace mount"``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

DEFAULT_WORKSPACE = "/workspaces/${localWorkspaceFolderBasename}"


LIFECYCLE = (
    "initializeCommand",  # runs on the host
    "onCreateCommand",
    "updateContentCommand",
    "postCreateCommand",
    "postStartCommand",
    "postAttachCommand",
)


# Features that mount the host's engine socket into the container.
SOCKET_FEATURES = ("docker-outside-of-docker", "docker-from-docker")


@dataclass(frozen=True)
class DevMount:
    type: str  # "bind" | "volume" | "tmpfs" | as written
    source: str | None
    target: str | None
    read_only: bool | None
    line: int | None
    origin: str  # "workspaceMount" | "default workspace mount" | "mounts" | "runArgs"


@dataclass(frozen=True)
class DevEnv:
    name: str
    value: str | None = field(repr=False)  # never rendered
    line: int | None
    origin: str  # "containerEnv" | "remoteEnv" | "runArgs"


@dataclass(frozen=True)
class DevSetting:
    """A scalar setting with its line; ``value`` None when not set."""

    value: str | None
    line: int | None


@dataclass(frozen=True)
class DevcontainerFacts:
    path: str
    image: str | None
    dockerfile: str | None  # relative to the devcontainer.json's folder
    build_context: str | None
    compose_files: tuple[str, ...]
    service: str | None
    workspace_folder: DevSetting  # value None only when compose-based and not set
    workspace_mount: DevMount | None  # None: compose-based (the compose file mounts)
    mounts: tuple[DevMount, ...]
    env: tuple[DevEnv, ...]
    remote_user: DevSetting
    container_user: DevSetting
    privileged: DevSetting  # "true"/"false"/None
    cap_add: tuple[DevSetting, ...]
    security_opt: tuple[DevSetting, ...]
    network: DevSetting
    pid: DevSetting
    ipc: DevSetting
    features: tuple[DevSetting, ...]
    commands: tuple[tuple[str, str, int | None], ...]  # (lifecycle key, shell text, line)
    # the project's scripts those commands run: (lifecycle key, script path, its text)
    scripts: tuple[tuple[str, str, str], ...] = field(default=(), repr=False)
