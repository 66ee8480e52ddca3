"""Compose files: schema-checked, read into frozen per-service facts with line numbers.

:func:`read_compose` is the entry point (also for the ``harden`` work: it returns the
services as :class:`ComposeService` records). The file is validated against the
Compose Specification's JSON schema vendored in ``agentguard/schemas``; schema errors
are returned with the facts (the caller records a failed source) and the services are
still read as far as their values have the expected types.

Unset keys: ``None`` for a string field means "not set in this file" -- the image then
decides, so the effective value is unknown here. Booleans are ``False`` when unset
(compose's default) and ``None`` when the value could not be read (interpolated).
"""

from __future__ import annotations

import importlib
import json
import re
from functools import lru_cache
from importlib import resources
from typing import Any

from agentguard.facts.compose import ComposeEnv as ComposeEnv
from agentguard.facts.compose import ComposeFile as ComposeFile
from agentguard.facts.compose import ComposeService as ComposeService
from agentguard.facts.compose import ComposeVolume as ComposeVolume
from agentguard.inspect.project.lined import DocumentError, LinedDoc
from agentguard.inspect.project.yaml_lined import load_yaml

__all__ = [
    "ComposeEnv",
    "ComposeFile",
    "ComposeService",
    "ComposeVolume",
    "DocumentError",
    "read_compose",
]


@lru_cache(maxsize=1)
def _validator() -> Any:
    jsonschema: Any = importlib.import_module("jsonschema")  # untyped library
    text = resources.files("agentguard.schemas").joinpath("compose-spec.json").read_text("utf-8")
    schema = json.loads(text)
    # the schema declares draft-07 (under an https URL jsonschema does not recognise)
    return jsonschema.Draft7Validator(schema)


def schema_errors(doc: LinedDoc, limit: int = 5) -> list[str]:
    """Schema violations of ``doc`` as "path (line N): message", at most ``limit``."""
    errors = sorted(_validator().iter_errors(doc.value), key=lambda e: list(map(str, e.path)))
    out: list[str] = []
    for err in errors[:limit]:
        path = tuple(err.absolute_path)
        where = ".".join(str(p) for p in path) or "(top level)"
        line = doc.line(*path)
        msg = err.message if len(err.message) < 200 else err.message[:200] + "..."
        out.append(f"{where} (line {line}): {msg}" if line else f"{where}: {msg}")
    if len(errors) > limit:
        out.append(f"... and {len(errors) - limit} more")
    return out


def read_compose(path: str, text: str) -> ComposeFile:
    """Parse and validate one compose file. Raises :class:`DocumentError` if not YAML."""
    doc = load_yaml(text)
    if not isinstance(doc.value, dict):
        raise DocumentError("a compose file must be a mapping at the top level", line=1)
    errors = tuple(schema_errors(doc))
    services_raw = doc.value.get("services")
    services: list[ComposeService] = []
    if isinstance(services_raw, dict):
        for name, body in services_raw.items():
            if isinstance(body, dict):
                services.append(_service(doc, name, body))
    return ComposeFile(path, tuple(services), errors)


def _str(value: Any) -> str | None:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (str, int, float)):
        return str(value)
    return None


def _bool(value: Any) -> bool | None:
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    return None


def _strings(value: Any) -> tuple[str, ...]:
    if isinstance(value, list):
        return tuple(s for s in (_str(v) for v in value) if s is not None)
    return ()


def _script(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        words = [str(v) for v in value if isinstance(v, (str, int, float))]
        if "-c" in words[:-1]:
            return words[words.index("-c") + 1]
        return " ".join(words)
    return None


def _service(doc: LinedDoc, name: str, body: dict[str, Any]) -> ComposeService:
    base = ("services", name)
    build = body.get("build")
    context = _str(build) if not isinstance(build, dict) else _str(build.get("context", "."))
    dockerfile = _str(build.get("dockerfile")) if isinstance(build, dict) else None
    if build is not None and dockerfile is None and context is not None:
        dockerfile = "Dockerfile"
    commands = [s for s in (_script(body.get("entrypoint")), _script(body.get("command"))) if s]
    return ComposeService(
        name=name,
        line=doc.line(*base),
        image=_str(body.get("image")),
        build_context=context,
        build_dockerfile=dockerfile,
        working_dir=_str(body.get("working_dir")),
        user=_str(body.get("user")),
        volumes=_volumes(doc, base, body.get("volumes")),
        environment=_environment(doc, base, body.get("environment")),
        cap_add=_strings(body.get("cap_add")),
        cap_drop=_strings(body.get("cap_drop")),
        privileged=_bool(body.get("privileged")),
        network_mode=_str(body.get("network_mode")),
        pid=_str(body.get("pid")),
        ipc=_str(body.get("ipc")),
        read_only=_bool(body.get("read_only")),
        security_opt=_strings(body.get("security_opt")),
        command=" && ".join(commands) if commands else None,
        field_lines=tuple((k, line) for k in body if (line := doc.line(*base, k)) is not None),
    )


_WINDOWS = re.compile(r"^[A-Za-z]:[\\/]")


def is_host_path(source: str) -> bool:
    """Short-syntax source that compose treats as a host path (bind), not a volume name."""
    return source.startswith(("/", ".", "~", "$", "\\")) or bool(_WINDOWS.match(source))


def parse_short_volume(spec: str) -> tuple[str, str | None, str | None, bool | None]:
    """(type, source, target, read_only) of ``[SOURCE:]TARGET[:MODE]``."""
    drive = ""
    rest = spec
    if _WINDOWS.match(spec):
        drive, rest = spec[:2], spec[2:]
    parts = _split_colons(rest)
    if drive:
        parts[0] = drive + parts[0]
    if len(parts) == 1:
        return "volume", None, parts[0], False
    source, target = parts[0], parts[1]
    mode = parts[2] if len(parts) > 2 else ""
    modes = {m.strip() for m in mode.split(",") if m.strip()}
    read_only: bool | None = "ro" in modes or "readonly" in modes
    if "$" in mode:
        read_only = None
    kind = "bind" if is_host_path(source) else "volume"
    return kind, source, target, read_only


def _split_colons(text: str) -> list[str]:
    """Split on ':' outside ``${...}`` (an interpolation may hold a ':-default')."""
    parts: list[str] = []
    buf: list[str] = []
    depth = 0
    i = 0
    while i < len(text):
        if text.startswith("${", i):
            depth += 1
            buf.append("${")
            i += 2
            continue
        ch = text[i]
        if ch == "}" and depth:
            depth -= 1
        if ch == ":" and not depth:
            parts.append("".join(buf))
            buf = []
        else:
            buf.append(ch)
        i += 1
    parts.append("".join(buf))
    return parts


def _volumes(doc: LinedDoc, base: tuple[str, str], raw: Any) -> tuple[ComposeVolume, ...]:
    if not isinstance(raw, list):
        return ()
    out: list[ComposeVolume] = []
    for i, item in enumerate(raw):
        line = doc.line(*base, "volumes", i)
        if isinstance(item, str):
            kind, source, target, ro = parse_short_volume(item)
            out.append(ComposeVolume(kind, source, target, ro, line, item))
        elif isinstance(item, dict):
            kind = _str(item.get("type")) or "volume"
            ro = _bool(item.get("read_only"))
            out.append(
                ComposeVolume(kind, _str(item.get("source")), _str(item.get("target")), ro, line)
            )
    return tuple(out)


def _environment(doc: LinedDoc, base: tuple[str, str], raw: Any) -> tuple[ComposeEnv, ...]:
    out: list[ComposeEnv] = []
    if isinstance(raw, dict):
        for key, value in raw.items():
            out.append(ComposeEnv(key, _str(value), doc.line(*base, "environment", key)))
    elif isinstance(raw, list):
        for i, item in enumerate(raw):
            text = _str(item)
            if text is None:
                continue
            name, eq, value = text.partition("=")
            out.append(
                ComposeEnv(name.strip(), value if eq else None, doc.line(*base, "environment", i))
            )
    return tuple(out)
