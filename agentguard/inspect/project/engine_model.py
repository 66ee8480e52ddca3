"""Facts about agent engines other than Claude's, agent actions in CI, Kubernetes workloads.

Frozen records produced by :mod:`.engine_settings` (Codex ``config.toml``, Gemini
``settings.json``), :mod:`.engine_cli` (``codex``/``gemini`` command lines),
:mod:`.workflows` (agent actions in GitHub workflows) and :mod:`.k8s_facts` (Kubernetes
manifests). A value that could not be read is :class:`~.model.Unknown`; an absent key is
``None`` (the engine's default, which the rules spell out).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentguard.findings import JSONValue
from agentguard.inspect.project.model import Option, to_json

CODEX = "Codex CLI"
GEMINI = "Gemini CLI"
OPENHANDS = "OpenHands"


@dataclass(frozen=True)
class EnginePolicy:
    """What one configuration of the Codex or Gemini CLI lets the agent do unasked.

    ``sandbox`` and ``approval`` hold the engine's own words (Codex: ``read-only``,
    ``workspace-write``, ``danger-full-access`` / ``untrusted``, ``on-failure``,
    ``on-request``, ``never``; Gemini: ``true``/``false``/a sandbox command / ``default``,
    ``auto_edit``, ``plan``, ``yolo``); None when this configuration does not set them.
    """

    engine: str  # CODEX | GEMINI
    path: str
    line: int
    label: str  # "config.toml", "codex command line", "openai/codex-action inputs", ...
    sandbox: Option | None = None
    approval: Option | None = None
    shell_removed: Option | None = None  # Gemini: tools.exclude / tools.core drop the shell
    shell_preapproved: Option | None = None  # Gemini: tools.allowed lists the whole shell
    yolo_disabled: Option | None = None  # Gemini: security.disableYoloMode / secure mode
    headless: bool = False  # `codex exec` (approval is always "never") or a CI action
    profile: str | None = None  # Codex profile the values come from
    # OpenHands: [sandbox] volumes, (host, container, writable; None: unknown), on `line`
    volumes: tuple[tuple[str, str, bool | None], ...] = ()
    volumes_line: int | None = None

    def to_json(self) -> dict[str, JSONValue]:
        def opt(o: Option | None) -> JSONValue:
            return None if o is None else to_json(o.value)

        return {
            "engine": self.engine,
            "path": self.path,
            "line": self.line,
            "label": self.label,
            "sandbox": opt(self.sandbox),
            "approval": opt(self.approval),
            "profile": self.profile,
        }


@dataclass(frozen=True)
class ActionStep:
    """A workflow step that runs an agent action (`uses: owner/action@ref`)."""

    action: str  # "openai/codex-action", "anthropics/claude-code-action", ...
    ref: str  # as written after "@" ("" when missing)
    path: str
    line: int
    job: str
    inputs: tuple[tuple[str, Any, int], ...] = ()  # (name, value, line)
    triggers: tuple[str, ...] = ()  # the workflow's `on:` events

    def input(self, name: str) -> tuple[Any, int] | None:
        for key, value, line in self.inputs:
            if key == name:
                return value, line
        return None


@dataclass(frozen=True)
class K8sVolume:
    name: str
    host_path: str | None  # set for hostPath volumes
    kind: str  # "hostPath", "emptyDir", "secret", "configMap", "persistentVolumeClaim", ...


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

    def line_of(self, key: str) -> int:
        return dict(self.lines).get(key, self.line)
