"""``.devcontainer/devcontainer.json``: the project's devcontainer, hardened.

Pure renderer over the parsed original. The checkout is no longer the workspace: the
workspace is an empty tmpfs at the working directory (``workspaceMount``), the user is the
numeric non-root one (``containerUser``, ``remoteUser``), ``runArgs`` carry the same
hardening as ``docker-run.sh`` (read-only root, capabilities dropped, no-new-privileges,
the network, limits), ``--privileged``, ``capAdd``, ``securityOpt``, host mounts and the
features that hand the container the host's Docker socket are gone, and every variable is
passed by name (``${localEnv:NAME}``): no value is written. A compose-based devcontainer is
hardened through its compose file instead.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agentguard.harden.model import HOME_DIR, HardenedSpec, HardenOptions
from agentguard.harden.services import env_vars, holds_secret
from agentguard.inspect.project.devcontainer_facts import SOCKET_FEATURES

FILE_NAME = ".devcontainer/devcontainer.json"
# carried over as written: they do not widen what the container can reach
_KEEP = (
    "name",
    "customizations",
    "onCreateCommand",
    "updateContentCommand",
    "postCreateCommand",
    "postStartCommand",
    "postAttachCommand",
    "waitFor",
    "overrideCommand",
    "shutdownAction",
    "hostRequirements",
    "userEnvProbe",
    "updateRemoteUserUID",
)
_SOCKET_LIKE = (*SOCKET_FEATURES, "docker-in-docker")
_BY_NAME = re.compile(r"^\$\{localEnv:[A-Za-z_][A-Za-z0-9_]*\}$")


def file_name(rel: str, single: bool) -> str:
    if single:
        return FILE_NAME
    folder = posixpath.basename(posixpath.dirname(rel)) or "root"
    return f".devcontainer/{folder}/devcontainer.json"


def _rebase(path: str, original_dir: Path, new_dir: Path) -> str:
    if path.startswith(("/", "$")) or "://" in path:
        return path
    return os.path.relpath(os.path.abspath(original_dir / path), os.path.abspath(new_dir))


def _env(raw: Any) -> dict[str, str]:
    items = raw.items() if isinstance(raw, Mapping) else []
    pairs = [(str(k), None if v is None else str(v)) for k, v in items]
    out: dict[str, str] = {}
    # already by name (`${localEnv:OTHER}`): kept as written
    out.update({k: v for k, v in pairs if v is not None and _BY_NAME.match(v)})
    pairs = [(k, v) for k, v in pairs if k not in out]
    for e in env_vars(pairs):
        out[e.name] = e.value if e.value is not None else f"${{localEnv:{e.name}}}"
    return out


def hardened_devcontainer(
    doc: Mapping[str, Any],
    *,
    rel: str,
    root: Path,
    new_rel: str,
    spec: HardenedSpec,
    opts: HardenOptions,
) -> tuple[dict[str, Any], list[str]]:
    """(the hardened document, notes on what changed)."""
    notes: list[str] = []
    out: dict[str, Any] = {}
    original_dir = (root / rel).parent
    new_dir = (opts.out / new_rel).parent
    for key in ("image",):
        if isinstance(doc.get(key), str):
            out[key] = doc[key]
    build = doc.get("build")
    if isinstance(build, Mapping):
        new_build = {k: v for k, v in build.items() if k != "args" or not holds_secret(v)}
        for key in ("dockerfile", "context"):
            if isinstance(build.get(key), str):
                # the Dockerfile is relative to the devcontainer.json, so is the context
                new_build[key] = _rebase(str(build[key]), original_dir, new_dir)
        out["build"] = new_build
    elif isinstance(doc.get("dockerFile"), str):
        out["build"] = {"dockerfile": _rebase(str(doc["dockerFile"]), original_dir, new_dir)}
    features = doc.get("features")
    if isinstance(features, Mapping):
        kept = {k: v for k, v in features.items() if not any(s in k for s in _SOCKET_LIKE)}
        if len(kept) != len(features):
            notes.append("dropped the features that give the container the host's Docker engine")
        if kept:
            out["features"] = kept
    for key in _KEEP:
        if key in doc and holds_secret(doc[key]):
            notes.append(f"{key} holds a literal secret: not repeated here")
        elif key in doc:
            out[key] = doc[key]
    # the checkout is not the workspace: an empty tmpfs is
    out["workspaceMount"] = f"type=tmpfs,target={spec.workdir},tmpfs-mode=1777"
    out["workspaceFolder"] = spec.workdir
    out["containerUser"] = spec.user
    out["remoteUser"] = spec.user
    out["runArgs"] = run_args(spec)
    mounts = [f"type=bind,source={m.host},target={m.container},readonly" for m in spec.allow_mounts]
    if mounts:
        out["mounts"] = mounts
    container_env = {
        "HOME": HOME_DIR,
        **_env(_run_args_env(doc.get("runArgs"))),
        **_env(doc.get("containerEnv")),
    }
    out["containerEnv"] = container_env
    remote = _env(doc.get("remoteEnv"))
    if remote:
        out["remoteEnv"] = remote
    dropped = sorted(
        k
        for k in ("privileged", "capAdd", "securityOpt", "mounts", "runArgs", "forwardPorts")
        if k in doc
    )
    if dropped:
        notes.append("replaced or dropped: " + ", ".join(dropped))
    notes.append(
        f"the checkout is no longer mounted; the workspace is an empty tmpfs at {spec.workdir}: "
        "mount data read-only with --allow-mount, or build the agent's code into the image"
    )
    return out, notes


def _run_args_env(raw: Any) -> dict[str, str | None]:
    """``--env NAME=VALUE`` / ``-e`` / ``--env=...`` in runArgs (carried by name)."""
    words = [str(w) for w in raw] if isinstance(raw, list) else []
    out: dict[str, str | None] = {}
    for i, w in enumerate(words):
        item = None
        if w in ("--env", "-e") and i + 1 < len(words):
            item = words[i + 1]
        elif w.startswith("--env="):
            item = w[len("--env=") :]
        if item:
            name, eq, value = item.partition("=")
            out[name] = value if eq else None
    return out


def run_args(spec: HardenedSpec) -> list[str]:
    args = ["--read-only"]
    args += [f"--tmpfs={t.path}:{t.options()}" for t in spec.tmpfs if t.path != spec.workdir]
    args += ["--cap-drop=ALL", "--security-opt=no-new-privileges:true"]
    args += [f"--network={spec.network}", f"--memory={spec.memory}", f"--pids-limit={spec.pids}"]
    return args


def render_devcontainer(document: Mapping[str, Any], *, header: Sequence[str]) -> str:
    # JSON with comments (the devcontainer format allows them): the header says what it is
    head = "".join(f"// {h}\n" if h else "//\n" for h in header)
    return head + json.dumps(document, indent=2, ensure_ascii=False) + "\n"
