"""Facts gathered from images, containers and project folders: frozen records (and the one
spelling of a capability name they hold).

Convention for unknowns: ``None`` means "could not be determined" (never "absent"/"safe").
An explicitly empty value (``""``, ``()``) means it was read and is empty.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# (its own module: a scan of a project folder builds it without the image records)
from agentguard.facts.project_file import ProjectFile as ProjectFile


@dataclass(frozen=True)
class HistoryEntry:
    created_by: str | None
    empty_layer: bool
    created: str | None = None
    comment: str | None = None


@dataclass(frozen=True)
class LayerInfo:
    index: int  # 0 = base
    digest: str  # diff_id ("sha256:...") when known, else the blob digest
    created_by: str | None  # from the matching non-empty history entry, None if unknown
    media_type: str | None = None
    compression: str | None = None  # "none" | "gzip" | "zstd"
    entries: int | None = None  # entries read in this layer; None if the layer failed


@dataclass(frozen=True)
class FileEntry:
    """A path in the final (merged, whiteouts applied) filesystem of an image."""

    path: str  # absolute, normalised, e.g. "/app/README.md"
    layer_index: int  # the layer that last wrote it
    layer_digest: str
    kind: str  # "file" | "dir" | "symlink" | "hardlink" | "other"
    size: int
    mode: int
    link_target: str | None = None


@dataclass(frozen=True)
class FileContent:
    """The bytes of one small file collected from an image (bounded size)."""

    path: str
    layer_digest: str
    data: bytes
    truncated: bool = False


@dataclass(frozen=True)
class InstalledDist:
    """A Python distribution installed in an image (from ``*.dist-info/METADATA``)."""

    name: str  # canonical
    version: str
    location: str  # the site-packages (or other) folder holding the dist-info
    metadata_path: str
    layer_digest: str
    requires: tuple[str, ...] = ()  # raw Requires-Dist lines


@dataclass(frozen=True)
class ImageConfig:
    user: str | None  # "" = not set (the engine runs as root); None = unknown
    workdir: str | None  # "" = not set ("/"); None = unknown
    env: tuple[tuple[str, str], ...] = ()
    entrypoint: tuple[str, ...] | None = None
    cmd: tuple[str, ...] | None = None
    labels: tuple[tuple[str, str], ...] = ()
    history: tuple[HistoryEntry, ...] = ()
    architecture: str | None = None
    os: str | None = None


@dataclass(frozen=True)
class ImageFacts:
    target: str  # what the user named
    image_id: str | None  # config digest "sha256:..."
    repo_digests: tuple[str, ...]
    config: ImageConfig
    layers: tuple[LayerInfo, ...]
    workdir_entries: tuple[FileEntry, ...]  # entries at or below the effective workdir
    workdir_entries_truncated: bool  # True when the cap on listed entries was hit
    contents: tuple[FileContent, ...]  # collected small files (agent configs, METADATA, ...)
    installed: tuple[InstalledDist, ...]
    docker_socket_paths: tuple[str, ...] = ()  # paths in the image named docker.sock
    # The agent outside the working directory: entries of the files the config names
    # (entrypoint script, PATH candidates), user/managed settings and agent CLI launchers.
    agent_entries: tuple[FileEntry, ...] = ()
    speculative_dropped: int = 0  # wrapper-target candidates not kept (over the cap)
    # Every symlink of the merged layers (absolute path, target): the agent's paths are
    # resolved against them as the kernel would. Not complete when a layer was not read or
    # the max_link_names cap was hit (then where a path leads may be unknown).
    symlinks: tuple[tuple[str, str], ...] = ()
    symlinks_complete: bool = True
    # What the read collected because links lead there (relative names; "x/" = a folder's
    # code): a wanted file missing there is absent, missing elsewhere is unread.
    link_wants: tuple[str, ...] = ()


@dataclass(frozen=True)
class MountFact:
    type: str  # "bind" | "volume" | "tmpfs" | "npipe" | unknown string
    source: str | None
    destination: str
    read_write: bool | None  # None = unknown


@dataclass(frozen=True)
class ContainerFacts:
    id: str
    name: str
    image_ref: str | None
    state: str | None  # "running", "created", "exited", ...
    user: str | None  # "" = not set (falls back to the image's USER); None = unknown
    workdir: str | None  # "" = not set (falls back to the image's WorkingDir)
    env: tuple[tuple[str, str], ...]
    mounts: tuple[MountFact, ...]
    privileged: bool | None
    cap_add: tuple[str, ...] | None
    cap_drop: tuple[str, ...] | None
    network_mode: str | None
    pid_mode: str | None
    ipc_mode: str | None
    read_only_rootfs: bool | None
    security_opt: tuple[str, ...] | None
    image: ImageFacts | None = None  # the image's own facts, when read
    entrypoint: tuple[str, ...] | None = None  # what the container runs (its Config)
    cmd: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Facts:
    """Everything one run gathered; rules receive this and nothing else."""

    images: tuple[ImageFacts, ...] = ()
    containers: tuple[ContainerFacts, ...] = ()
    extra: dict[str, object] = field(default_factory=dict)


def normalise_capability(cap: str) -> str:
    """`CAP_NET_ADMIN` / `net_admin` -> `NET_ADMIN` (the engine returns the prefix)."""
    upper = cap.strip().upper()
    return upper[4:] if upper.startswith("CAP_") else upper
