"""Facts about Kubernetes workloads: the containers of manifests, their volumes and mounts.

Frozen records produced by :mod:`agentguard.inspect.project.k8s_facts`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

NOT_A_NAME = "<not a name>"


@dataclass(frozen=True)
class K8sVolume:
    name: str
    host_path: str | None  # set for hostPath volumes
    kind: str  # "hostPath", "emptyDir", "secret", "configMap", "persistentVolumeClaim", ...
    # what it names: the secret's ``secretName``, the configMap's or the claim's name
    # (None: not named, or not a string)
    source: str | None = None


@dataclass(frozen=True)
class K8sMount:
    volume: str
    mount_path: str
    read_only: bool | None
    line: int | None


@dataclass(frozen=True)
class K8sContainer:
    """One container of a Kubernetes workload, with the pod's settings folded in."""

    path: str
    workload: str  # "Deployment/agent"
    name: str
    line: int
    init: bool
    working_dir: str | None
    run_as_user: Any  # int, None (unset), or Unknown
    run_as_non_root: Any  # bool or None (unset)
    privileged: Any  # bool or None
    allow_privilege_escalation: Any  # bool or None (unset: allowed)
    read_only_root: Any  # bool or None (unset: writable)
    cap_add: tuple[str, ...]
    host_network: bool
    host_pid: bool
    host_ipc: bool
    mounts: tuple[K8sMount, ...]
    volumes: tuple[K8sVolume, ...]
    env: tuple[tuple[str, str | None, int | None], ...] = field(repr=False, default=())
    lines: tuple[tuple[str, int], ...] = ()  # "securityContext" -> line, ...
    # the last line of its own text (the line before what follows it in its document;
    # None: to the end of the file): a command line between ``line`` and ``end`` is its
    end: int | None = None
    # what the container starts (the map's agent services): the image as written, and
    # ``command``/``args`` as written (None: unset, the image's ENTRYPOINT/CMD run; a value
    # that is not a list of strings: ``("<not a list>",)``)
    image: str | None = None
    command: tuple[str, ...] | None = None
    args: tuple[str, ...] | None = None
    # secrets by name only: (env name, "secret NAME key KEY", line) of each
    # ``valueFrom.secretKeyRef``; (kind "secretRef"/"configMapRef", name, line) of ``envFrom``
    secret_env: tuple[tuple[str, str, int | None], ...] = ()
    env_from: tuple[tuple[str, str, int | None], ...] = ()
    # the pod's serviceAccountName (None: unset, so "default"; NOT_A_NAME: set to something
    # that is not a name, which the map says is unknown, never "default")
    service_account: str | None = None
    automount_token: bool | None = None  # the pod's automountServiceAccountToken (None: unset)

    def line_of(self, key: str) -> int:
        return dict(self.lines).get(key, self.line)
