"""The image config blob (``rootfs``, ``config``, ``history``) read into :class:`ImageConfig`."""

from __future__ import annotations

import hashlib
import json
import posixpath
import re
from dataclasses import dataclass
from typing import Any

from agentguard.inspect.facts import HistoryEntry, ImageConfig
from agentguard.inspect.image.limits import ReadFailure

_DIGEST = re.compile(r"^([a-z0-9]+(?:[+._-][a-z0-9]+)*):([a-zA-Z0-9=_-]+)$")


@dataclass(frozen=True)
class ParsedConfig:
    config: ImageConfig
    diff_ids: tuple[str, ...] | None  # None when the config has no usable rootfs
    workdir: str  # effective, relative: "" is the root


def parse_digest(digest: str) -> tuple[str, str]:
    """``"sha256:<hex>"`` into (algorithm, hex); raises for anything else."""
    m = _DIGEST.match(digest)
    if not m or m.group(1) not in ("sha256", "sha512"):
        raise ReadFailure("digest-unsupported", f"unsupported or malformed digest {digest!r}")
    return m.group(1), m.group(2).lower()


def digest_of(data: bytes, algorithm: str = "sha256") -> str:
    return f"{algorithm}:{hashlib.new(algorithm, data).hexdigest()}"


def verify(data: bytes, expected: str | None, what: str) -> str:
    """The sha256 digest of ``data``; raises when ``expected`` is given and differs."""
    if expected is None:
        return digest_of(data)
    algorithm, _ = parse_digest(expected)
    actual = digest_of(data, algorithm)
    if actual != expected.lower():
        raise ReadFailure("digest-mismatch", f"{what} has digest {actual}, expected {expected}")
    return expected if algorithm == "sha256" else digest_of(data)


def load_json(data: bytes, what: str) -> Any:
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise ReadFailure("invalid-json", f"{what} is not valid JSON: {exc}") from None


def parse_config(doc: Any) -> ParsedConfig:
    if not isinstance(doc, dict):
        raise ReadFailure("invalid-config", "the image config is not a JSON object")
    c = doc.get("config") or {}
    if not isinstance(c, dict):
        raise ReadFailure("invalid-config", "the image config's 'config' is not an object")
    workdir = _str(c.get("WorkingDir"))
    config = ImageConfig(
        user=_str(c.get("User")),
        workdir=workdir,
        env=tuple(_env(e) for e in _list(c.get("Env"))),
        entrypoint=_argv(c.get("Entrypoint")),
        cmd=_argv(c.get("Cmd")),
        labels=tuple(sorted((str(k), _str(v)) for k, v in _dict(c.get("Labels")).items())),
        history=tuple(_history(h) for h in _list(doc.get("history")) if isinstance(h, dict)),
        architecture=_opt(doc.get("architecture")),
        os=_opt(doc.get("os")),
    )
    rootfs = doc.get("rootfs")
    diff_ids: tuple[str, ...] | None = None
    if isinstance(rootfs, dict) and isinstance(rootfs.get("diff_ids"), list):
        diff_ids = tuple(str(d) for d in rootfs["diff_ids"])
    return ParsedConfig(config, diff_ids, effective_workdir(workdir))


def platform_of(doc: Any) -> str | None:
    if not isinstance(doc, dict) or not doc.get("os") or not doc.get("architecture"):
        return None
    parts = [str(doc["os"]), str(doc["architecture"])]
    if doc.get("variant"):
        parts.append(str(doc["variant"]))
    return "/".join(parts)


def effective_workdir(workdir: str) -> str:
    """The folder an agent starts in, relative to the root ("" = "/")."""
    if not workdir:
        return ""
    return posixpath.normpath("/" + workdir).lstrip("/")


def _str(value: Any) -> str:
    return "" if value is None else str(value)


def _opt(value: Any) -> str | None:
    return None if value is None else str(value)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dict(value: Any) -> dict[Any, Any]:
    return value if isinstance(value, dict) else {}


def _argv(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return (value,)
    return tuple(str(v) for v in _list(value))


def _env(entry: Any) -> tuple[str, str]:
    key, _, value = str(entry).partition("=")
    return key, value


def _history(h: dict[str, Any]) -> HistoryEntry:
    return HistoryEntry(
        created_by=_opt(h.get("created_by")),
        empty_layer=bool(h.get("empty_layer", False)),
        created=_opt(h.get("created")),
        comment=_opt(h.get("comment")),
    )
