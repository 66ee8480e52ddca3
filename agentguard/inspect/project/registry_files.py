"""The project's own files that point a package launcher at another registry or index:
``.npmrc`` (``registry=``, ``@scope:registry=``, ``userconfig=``), ``uv.toml`` and
``pyproject.toml`` ``[tool.uv]`` (``index``, ``index-url``, ``find-links``...), ``pip.conf``.
They are the pull request's choice: a launch that reads them is not pinned against the
default registry (:mod:`agentguard.facts.launch_argv`). A file that could not be read is a
failed source, and every launch of its kind is then unknown, never "pinned"."""

from __future__ import annotations

import configparser
import dataclasses
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentguard import safeio
from agentguard.facts.agents import McpServer
from agentguard.facts.launch_argv import NPM, PYPI, parse_launch
from agentguard.findings import Source

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

_UV_KEYS = ("index", "index-url", "extra-index-url", "find-links", "allow-insecure-host")
_PIP_KEYS = ("index-url", "extra-index-url", "find-links", "trusted-host")
_NPMRC_KEY = re.compile(r"^\s*(registry|@[^\s=:]+:registry|userconfig|globalconfig)\s*=", re.I)
_FILES = ((".npmrc", NPM), ("uv.toml", PYPI), ("pyproject.toml", PYPI), ("pip.conf", PYPI))
Setting = tuple[str, str]  # (kind, "FILE:LINE sets `KEY`")


def _line(text: str, key: str) -> int:
    for n, line in enumerate(text.splitlines(), 1):
        if re.match(rf"^\s*\[*\s*{re.escape(key)}\b", line):
            return n
    return 1


def _npmrc(text: str, name: str) -> list[Setting]:
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        m = _NPMRC_KEY.match(line)
        if m:
            out.append((NPM, f"{name}:{n} sets `{m.group(1)}`"))
    return out


def _uv(data: dict[str, Any], text: str, name: str) -> list[Setting]:
    pip = data.get("pip")
    keys = [k for k in _UV_KEYS if k in data]
    keys += [k for k in _PIP_KEYS if isinstance(pip, dict) and k in pip]
    return [(PYPI, f"{name}:{_line(text, k)} sets `{k}`") for k in keys]


def _pip_conf(text: str, name: str) -> list[Setting]:
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_string(text)
    return [
        (PYPI, f"{name}:{_line(text, key)} sets `{key}`")
        for section in parser.sections()
        for key in _PIP_KEYS
        if parser.has_option(section, key)
    ]


def _one(root: Path, name: str) -> list[Setting]:
    text = safeio.read_text(root / name, root=root)
    if name == ".npmrc":
        return _npmrc(text, name)
    if name == "pip.conf":
        return _pip_conf(text, name)
    data = tomllib.loads(text)
    if name == "pyproject.toml":
        tool = data.get("tool")
        uv = tool.get("uv") if isinstance(tool, dict) else None
        return _uv(uv, text, name) if isinstance(uv, dict) else []
    return _uv(data, text, name)


def registry_settings(root: Path) -> tuple[tuple[Setting, ...], tuple[Source, ...]]:
    """What the project's root files set, and a failed source for each that exists but
    could not be read (then every launch of its kind is unknown)."""
    out: list[Setting] = []
    failed: list[Source] = []
    for name, kind in _FILES:
        try:
            out += _one(root, name)
            continue
        except FileNotFoundError:
            continue
        except ValueError:
            if name == "pyproject.toml":
                continue  # uv cannot read it either (its own reader reports it)
        except (OSError, configparser.Error):
            pass
        out.append((kind, f"{name} (could not be read: what registry it sets is unknown)"))
        failed.append(
            Source.failed(
                "file",
                name,
                "could not be read (it may set the registry MCP server launches use)",
                error_code="registry-config-unreadable",
                retryable=False,
                remedy=f"Fix {name}, then run agentguard again.",
            )
        )
    return tuple(out), tuple(failed)


def project_registries(
    root: Path, servers: Sequence[McpServer]
) -> tuple[list[McpServer], tuple[Source, ...]]:
    """The servers, each carrying what the project's files set for the launchers (read
    only when a server is launched through a registry launcher), and the failed reads."""
    if not any(parse_launch(s.command, _args(s.args)) for s in servers):
        return list(servers), ()
    settings, failed = registry_settings(root)
    if not settings:
        return list(servers), failed
    return [dataclasses.replace(s, registries=settings) for s in servers], failed


def _args(args: Any) -> tuple[Any, ...]:
    return args if isinstance(args, tuple) else (args,)
