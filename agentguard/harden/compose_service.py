"""The service to harden from a compose service body (pure: no I/O): build paths re-anchored
at the output folder, the mounts and settings the hardening replaces dropped and said so in
the service's notes, a codex or gemini command line in its command hardened as SUMMARY.md's
replacement line is, and a literal secret never repeated (the other builders: :mod:`.services`)."""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentguard.harden.model import HardenOptions, NamedVolume, ServiceSpec
from agentguard.harden.services import PASSTHROUGH_KEYS, env_vars, holds_secret, keep_volume, rebase
from agentguard.secret_text import classify


def service_from_compose(
    name: str,
    body: Mapping[str, Any],
    *,
    compose_dir: Path,
    out_dir: Path,
    opts: HardenOptions,
    origin: str,
) -> ServiceSpec:
    """A compose service, hardened: build paths re-anchored at the output folder."""
    from agentguard.inspect.project.compose_facts import parse_short_volume

    notes: list[str] = []
    build = body.get("build")
    new_build: dict[str, Any] | None = None
    if isinstance(build, str):
        new_build = {"context": rebase(build, compose_dir, out_dir)}
    elif isinstance(build, Mapping):
        new_build = dict(build)
        new_build["context"] = rebase(str(build.get("context", ".")), compose_dir, out_dir)
        new_build.pop("args", None) if _secret_args(build.get("args")) else None
    image = body.get("image") if isinstance(body.get("image"), str) else None
    volumes: list[NamedVolume] = []
    for v in body.get("volumes") or []:
        if isinstance(v, str):
            kind, source, target, ro = parse_short_volume(v)
        elif isinstance(v, Mapping):
            kind = str(v.get("type", "volume"))
            source = v.get("source") if isinstance(v.get("source"), str) else None
            target = v.get("target") if isinstance(v.get("target"), str) else None
            ro = bool(v.get("read_only", False))
        else:
            continue
        keep, why = keep_volume(kind, source, target or "", opts)
        if keep and source is not None and target is not None:
            volumes.append(NamedVolume(source, target, bool(ro)))
        else:
            notes.append(f"dropped the {kind} mount {source or '?'} -> {target} ({why})")
    dropped = sorted(
        k
        for k in body
        if k
        in (
            "privileged",
            "cap_add",
            "devices",
            "pid",
            "ipc",
            "network_mode",
            "networks",
            "userns_mode",
            "volumes_from",
            "env_file",
        )
    )
    if dropped:
        notes.append("dropped: " + ", ".join(dropped))
    old_wd = body.get("working_dir")
    if isinstance(old_wd, str) and posixpath.normpath(old_wd) != opts.workdir:
        notes.append(
            f"the working directory moves from {old_wd} to the empty {opts.workdir}: if the "
            f"command uses paths relative to {old_wd} (`python -m pkg`, `node app.js`), make "
            f"them absolute or set PYTHONPATH={old_wd}"
        )
    if "env_file" in body:
        notes.append(
            "env_file was dropped: pass the variables it holds at run time by name, or name "
            "a file for them with --env-file (their values were not read)"
        )
    start: dict[str, Any] = {}
    for key in ("entrypoint", "command"):
        if holds_secret(body.get(key)):
            notes.append(f"{key} holds a literal secret: not repeated here; pass it at run time")
        else:
            start[key] = _engine_hardened(body.get(key))
    passthrough = {}
    for key in PASSTHROUGH_KEYS:
        if key in body and holds_secret(body[key]):
            notes.append(f"{key} holds a literal secret: not repeated here")
        elif key in body:
            passthrough[key] = body[key]
    return ServiceSpec(
        name=name,
        image=image,
        build=new_build,
        entrypoint=start.get("entrypoint"),
        command=start.get("command"),
        env=env_vars(_compose_env(body.get("environment"))),
        volumes=tuple(volumes),
        passthrough=passthrough,
        origin=origin,
        notes=tuple(notes),
        compose_form=True,
    )


def _engine_hardened(value: Any) -> Any:
    """A service's command or entrypoint with a codex/gemini command line in it (also inside
    `sh -c "..."`) hardened as SUMMARY.md's replacement line is: the same rewrite."""
    import json

    from agentguard.harden.engine_lines import command_at, rewrite_lines

    if not isinstance(value, (str, list)) or not all(isinstance(v, str) for v in value):
        return value
    line = value if isinstance(value, str) else json.dumps(value)
    for engine in ("codex", "gemini"):
        at = command_at(line, engine)
        if at is not None:
            rest = line[at:].replace('"', " ").replace("\\", " ").split()
            headless = engine == "codex" and bool(rest) and rest[0] == "exec"
            line = rewrite_lines([line], engine, headless=headless)[0]
    if isinstance(value, str):
        return line
    try:
        new = json.loads(line)
    except ValueError:
        return value
    return new if isinstance(new, list) else value


def _secret_args(args: Any) -> bool:
    pairs = _compose_env(args)
    return any(v is not None and classify(k, v) is not None for k, v in pairs)


def _compose_env(raw: Any) -> list[tuple[str, str | None]]:
    out: list[tuple[str, str | None]] = []
    if isinstance(raw, Mapping):
        for k, v in raw.items():
            out.append((str(k), None if v is None else str(v)))
    elif isinstance(raw, list):
        for item in raw:
            name, eq, value = str(item).partition("=")
            out.append((name.strip(), value if eq else None))
    return out
