"""ContainerFacts from the engine's `docker inspect` record (``container.attrs``).

Parsing only: a field that is absent or of an unexpected type becomes None (unknown),
never a safe default. ``CapAdd``/``CapDrop`` come back with the ``CAP_`` prefix from the
engine; they are normalised without it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentguard.facts.image import normalise_capability
from agentguard.inspect.facts import ContainerFacts, ImageFacts, MountFact


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _bool(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def _caps(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return ()  # the engine writes null for "none added"
    if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
        return None
    return tuple(normalise_capability(c) for c in value)


def _str_list(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
        return None
    return tuple(value)


def parse_env(value: Any) -> tuple[tuple[str, str], ...]:
    """``["A=1", "B="]`` -> ``(("A", "1"), ("B", ""))``; an entry without "=" has no value."""
    out: list[tuple[str, str]] = []
    for item in value if isinstance(value, list) else []:
        if isinstance(item, str):
            name, _, val = item.partition("=")
            out.append((name, val))
    return tuple(out)


def parse_mounts(value: Any) -> tuple[MountFact, ...]:
    mounts: list[MountFact] = []
    for m in value if isinstance(value, list) else []:
        if not isinstance(m, Mapping):
            continue
        mounts.append(
            MountFact(
                type=_str(m.get("Type")) or "unknown",
                source=_str(m.get("Source")),
                destination=_str(m.get("Destination")) or "",
                read_write=_bool(m.get("RW")),
            )
        )
    return tuple(mounts)


def _name(attrs: Mapping[str, Any]) -> str:
    name = _str(attrs.get("Name")) or _str(attrs.get("Id")) or "unknown"
    return name.lstrip("/")


def container_facts(attrs: Mapping[str, Any], image: ImageFacts | None) -> ContainerFacts:
    """Facts from one `docker inspect` record; ``image`` is its image's facts, when read."""
    config = attrs.get("Config") if isinstance(attrs.get("Config"), Mapping) else None
    host = attrs.get("HostConfig") if isinstance(attrs.get("HostConfig"), Mapping) else None
    state = attrs.get("State") if isinstance(attrs.get("State"), Mapping) else None
    return ContainerFacts(
        id=_str(attrs.get("Id")) or "unknown",
        name=_name(attrs),
        image_ref=_str(config.get("Image")) if config else None,
        state=_str(state.get("Status")) if state else None,
        user=_str(config.get("User")) if config else None,
        workdir=_str(config.get("WorkingDir")) if config else None,
        env=parse_env(config.get("Env")) if config else (),
        mounts=parse_mounts(attrs.get("Mounts")),
        privileged=_bool(host.get("Privileged")) if host else None,
        cap_add=_caps(host.get("CapAdd")) if host else None,
        cap_drop=_caps(host.get("CapDrop")) if host else None,
        network_mode=_str(host.get("NetworkMode")) if host else None,
        pid_mode=_namespace(host.get("PidMode")) if host else None,
        ipc_mode=_namespace(host.get("IpcMode")) if host else None,
        read_only_rootfs=_bool(host.get("ReadonlyRootfs")) if host else None,
        security_opt=_str_list(host.get("SecurityOpt")) if host else None,
        image=image,
        entrypoint=_str_list(config.get("Entrypoint")) if config else None,
        cmd=_str_list(config.get("Cmd")) if config else None,
    )


def _namespace(value: Any) -> str | None:
    """PidMode/IpcMode: "" means the engine's private default."""
    if not isinstance(value, str):
        return None
    return value or "private"
