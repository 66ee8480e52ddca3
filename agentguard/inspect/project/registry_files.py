"""The project's own files that point a package launcher at another registry or index:
``.npmrc`` (``registry=``, ``@scope:registry=``, ``userconfig=``, ``cache=``... as npm's
ini reader reads a key: quoted or not, ``key[]``), ``uv.toml`` and
``pyproject.toml`` ``[tool.uv]`` (``index``, ``index-url``, ``find-links``...), ``pip.conf``.
They are the pull request's choice: a launch that reads them is not pinned against the
default registry (:mod:`agentguard.facts.launch_argv`). A file that could not be read is a
failed source, and every launch of its kind is then unknown, never "pinned"."""

from __future__ import annotations

import configparser
import dataclasses
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentguard import safeio
from agentguard.facts.agents import McpServer
from agentguard.facts.launch_argv import NPM, PYPI, npm_source_key, package_name, parse_launch
from agentguard.findings import Source
from agentguard.inspect.project.npm_installs import local_installs

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

_UV_KEYS = ("index", "index-url", "extra-index-url", "find-links", "allow-insecure-host")
_PIP_KEYS = ("index-url", "extra-index-url", "find-links", "trusted-host")
_FILES = ((".npmrc", NPM), ("uv.toml", PYPI), ("pyproject.toml", PYPI), ("pip.conf", PYPI))
Setting = tuple[str, str]  # (kind, "FILE:LINE sets `KEY`")


def _line(text: str, key: str) -> int:
    for n, line in enumerate(text.splitlines(), 1):
        if re.match(rf"^\s*\[*\s*{re.escape(key)}\b", line):
            return n
    return 1


# npm's ini reader: lines split at CR and LF only, JavaScript's `trim` (which also takes
# U+FEFF), a `[section]` line, a key before the first `=` (or the whole line)
_INI_LINES = re.compile(r"\r\n|\r|\n")
_SECTION = re.compile(r"^\[[^\]]*\][\s\ufeff]*\Z")
_TRIM = "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"


def _unquote(key: str) -> str:
    """ini's ``unsafe`` of a key: trimmed; a quoted one out of its quotes (JSON-decoded);
    else cut at the first unescaped `;` or `#` and unescaped."""
    key = key.strip(_TRIM)
    if len(key) >= 1 and key[0] == key[-1] and key[0] in "\"'":
        inner = key[1:-1] if key[0] == "'" else key
        try:
            value = json.loads(inner)
        except ValueError:
            return inner
        return value if isinstance(value, str) else inner
    out, escaped = [], False
    for c in key:
        if escaped:
            out.append(c if c in "\\;#" else "\\" + c)
            escaped = False
        elif c in ";#":
            break
        elif c == "\\":
            escaped = True
        else:
            out.append(c)
    return ("".join(out) + ("\\" if escaped else "")).strip(_TRIM)


def npmrc_key(line: str) -> str | None:
    """The key of an ``.npmrc`` line as npm's ini reader takes it (None: no key): before
    the first `=` (or the whole line), out of its quotes (`"registry"`, `'registry'`),
    without the `[]` of an array (`registry[]`). A line in a `[section]` is read too (npm
    ignores it: read in excess, never missed)."""
    if not line.strip(_TRIM) or line.lstrip(_TRIM)[:1] in (";", "#") or _SECTION.match(line):
        return None
    key = _unquote(line.split("=", 1)[0])
    return key[:-2] if len(key) > 2 and key.endswith("[]") else key


def _npmrc(text: str, name: str) -> list[Setting]:
    out = []
    for n, line in enumerate(_INI_LINES.split(text), 1):
        key = npmrc_key(line)
        if key is not None and npm_source_key(key):
            out.append((NPM, f"{name}:{n} sets `{key}`"))
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
    lines = [(s, parse_launch(s.command, _args(s.args))) for s in servers]
    if not any(line for _, line in lines):
        return list(servers), ()
    settings, failed = registry_settings(root)
    launched = [
        text
        for s, line in lines
        if line is not None and line.kind == NPM
        for at in (line.spec_at, *line.more)
        if at is not None and isinstance(text := line.text(_args(s.args), at), str)
    ]
    installs, unread = local_installs(root, (n for n in map(package_name, launched) if n))
    settings, failed = (*settings, *installs), (*failed, *unread)
    if not settings:
        return list(servers), failed
    return [dataclasses.replace(s, registries=settings) for s in servers], failed


def _args(args: Any) -> tuple[Any, ...]:
    return args if isinstance(args, tuple) else (args,)
