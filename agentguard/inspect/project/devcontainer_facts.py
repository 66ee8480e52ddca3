"""devcontainer.json facts: the workspace mount and folder, mounts, runArgs, env, users.

A devcontainer that is not compose-based always bind-mounts the checkout: without a
``workspaceMount`` the tools mount ``${localWorkspaceFolder}`` at
``/workspaces/${localWorkspaceFolderBasename}`` and make that the working folder. That
implicit mount is recorded as such (``origin="default workspace mount"``).
"""

from __future__ import annotations

import shlex
from typing import Any

from agentguard.facts.devcontainer import DEFAULT_WORKSPACE as DEFAULT_WORKSPACE
from agentguard.facts.devcontainer import LIFECYCLE as LIFECYCLE
from agentguard.facts.devcontainer import SOCKET_FEATURES as SOCKET_FEATURES
from agentguard.facts.devcontainer import DevcontainerFacts as DevcontainerFacts
from agentguard.facts.devcontainer import DevEnv as DevEnv
from agentguard.facts.devcontainer import DevMount as DevMount
from agentguard.facts.devcontainer import DevSetting as DevSetting
from agentguard.inspect.project.jsonc import load_jsonc
from agentguard.inspect.project.lined import DocumentError, LinedDoc


def parse_mount_string(text: str) -> tuple[str, str | None, str | None, bool | None]:
    """(type, source, target, read_only) of ``source=...,target=...,type=bind,readonly``."""
    fields: dict[str, str] = {}
    for part in text.split(","):
        key, eq, value = part.partition("=")
        fields[key.strip().lower()] = value.strip() if eq else "true"
    source = fields.get("source") or fields.get("src")
    target = fields.get("target") or fields.get("destination") or fields.get("dst")
    ro_text = fields.get("readonly", fields.get("ro", "false")).lower()
    read_only: bool | None = (
        ro_text in ("true", "1") if ro_text in ("true", "1", "false", "0") else None
    )
    return fields.get("type", "volume"), source, target, read_only


def _str(value: Any) -> str | None:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (str, int, float)):
        return str(value)
    return None


def _setting(doc: LinedDoc, key: str) -> DevSetting:
    value = doc.value.get(key)
    return DevSetting(_str(value), doc.line(key) if key in doc.value else None)


def _script(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        words = [str(v) for v in value if isinstance(v, (str, int, float))]
        if "-c" in words[:-1]:
            return [words[words.index("-c") + 1]]
        return [shlex.join(words)]
    if isinstance(value, dict):  # named parallel commands
        return [s for v in value.values() for s in _script(v)]
    return []


def read_devcontainer(path: str, text: str) -> DevcontainerFacts:
    """Parse one devcontainer.json. Raises :class:`DocumentError`."""
    doc = load_jsonc(text)
    if not isinstance(doc.value, dict):
        raise DocumentError("devcontainer.json must hold an object", line=1)
    v: dict[str, Any] = doc.value
    build = v.get("build") if isinstance(v.get("build"), dict) else {}
    assert isinstance(build, dict)
    dockerfile = _str(build.get("dockerfile")) or _str(v.get("dockerFile"))
    compose_raw = v.get("dockerComposeFile")
    compose = (
        (compose_raw,)
        if isinstance(compose_raw, str)
        else tuple(c for c in compose_raw if isinstance(c, str))
        if isinstance(compose_raw, list)
        else ()
    )
    folder = _setting(doc, "workspaceFolder")
    if folder.value is None and not compose:
        folder = DevSetting(DEFAULT_WORKSPACE, None)
    workspace_mount: DevMount | None = None
    wm = v.get("workspaceMount")
    if isinstance(wm, str) and wm.strip():
        kind, src, dst, ro = parse_mount_string(wm)
        workspace_mount = DevMount(kind, src, dst, ro, doc.line("workspaceMount"), "workspaceMount")
    elif not compose:
        anchor = next((k for k in ("image", "build", "dockerFile") if k in v), None)
        workspace_mount = DevMount(
            "bind",
            "${localWorkspaceFolder}",
            folder.value or DEFAULT_WORKSPACE,
            False,
            doc.line(anchor) if anchor else 1,
            "default workspace mount",
        )
    mounts: list[DevMount] = []
    raw_mounts = v.get("mounts")
    for i, m in enumerate(raw_mounts if isinstance(raw_mounts, list) else []):
        line = doc.line("mounts", i)
        if isinstance(m, str):
            kind, src, dst, ro = parse_mount_string(m)
            mounts.append(DevMount(kind, src, dst, ro, line, "mounts"))
        elif isinstance(m, dict):
            mounts.append(
                DevMount(
                    _str(m.get("type")) or "volume",
                    _str(m.get("source")),
                    _str(m.get("target")),
                    m.get("readonly") if isinstance(m.get("readonly"), bool) else False,
                    line,
                    "mounts",
                )
            )
    env: list[DevEnv] = []
    for key in ("containerEnv", "remoteEnv"):
        block = v.get(key)
        if isinstance(block, dict):
            for name, value in block.items():
                env.append(DevEnv(name, _str(value), doc.line(key, name), key))
    run = _run_args(doc)
    mounts.extend(run["mounts"])
    env.extend(run["env"])
    cap_raw = v.get("capAdd")
    caps = [
        DevSetting(c, doc.line("capAdd", i))
        for i, c in enumerate(cap_raw if isinstance(cap_raw, list) else [])
        if isinstance(c, str)
    ]
    sec_raw = v.get("securityOpt")
    secs = [
        DevSetting(s, doc.line("securityOpt", i))
        for i, s in enumerate(sec_raw if isinstance(sec_raw, list) else [])
        if isinstance(s, str)
    ]
    feats = v.get("features")
    features = tuple(
        DevSetting(name, doc.line("features", name))
        for name in (feats if isinstance(feats, dict) else {})
    )
    commands = tuple(
        (key, script, doc.line(key)) for key in LIFECYCLE for script in _script(v.get(key))
    )
    privileged = _setting(doc, "privileged")
    if run["privileged"] is not None:
        privileged = run["privileged"]
    return DevcontainerFacts(
        path=path,
        image=_str(v.get("image")),
        dockerfile=dockerfile,
        build_context=_str(build.get("context")),
        compose_files=compose,
        service=_str(v.get("service")),
        workspace_folder=folder,
        workspace_mount=workspace_mount,
        mounts=tuple(mounts),
        env=tuple(env),
        remote_user=_setting(doc, "remoteUser"),
        container_user=run["user"] or _setting(doc, "containerUser"),
        privileged=privileged,
        cap_add=(*caps, *run["caps"]),
        security_opt=(*secs, *run["secs"]),
        network=run["network"] or DevSetting(None, None),
        pid=run["pid"] or DevSetting(None, None),
        ipc=run["ipc"] or DevSetting(None, None),
        features=features,
        commands=commands,
    )


_RUN_VALUE_FLAGS = {
    "--cap-add": "caps",
    "--security-opt": "secs",
    "--network": "network",
    "--net": "network",
    "--pid": "pid",
    "--ipc": "ipc",
    "-v": "volume",
    "--volume": "volume",
    "--mount": "mount",
    "-u": "user",
    "--user": "user",
    "-e": "env",
    "--env": "env",
}


def _run_args(doc: LinedDoc) -> dict[str, Any]:
    """Flags of ``runArgs`` (``docker run`` arguments), each with its line."""
    from agentguard.inspect.project.compose_facts import parse_short_volume

    out: dict[str, Any] = {
        "caps": [], "secs": [], "mounts": [], "env": [],
        "network": None, "pid": None, "ipc": None, "user": None, "privileged": None,
    }  # fmt: skip
    raw = doc.value.get("runArgs")
    args = [(a, doc.line("runArgs", i)) for i, a in enumerate(raw if isinstance(raw, list) else [])]
    i = 0
    while i < len(args):
        arg, line = args[i]
        i += 1
        if not isinstance(arg, str):
            continue
        if arg == "--privileged" or arg == "--privileged=true":
            out["privileged"] = DevSetting("true", line)
            continue
        flag, eq, value = arg.partition("=")
        key = _RUN_VALUE_FLAGS.get(flag)
        if key is None:
            continue
        if not eq:
            if i >= len(args) or not isinstance(args[i][0], str):
                continue
            value = args[i][0]
            i += 1
        setting = DevSetting(value, line)
        if key in ("caps", "secs"):
            out[key].append(setting)
        elif key in ("network", "pid", "ipc", "user"):
            out[key] = setting
        elif key == "env":
            name, has, val = value.partition("=")
            out["env"].append(DevEnv(name, val if has else None, line, "runArgs"))
        elif key == "volume":
            kind, src, dst, ro = parse_short_volume(value)
            out["mounts"].append(DevMount(kind, src, dst, ro, line, "runArgs"))
        elif key == "mount":
            kind, src, dst, ro = parse_mount_string(value)
            out["mounts"].append(DevMount(kind, src, dst, ro, line, "runArgs"))
    return out
