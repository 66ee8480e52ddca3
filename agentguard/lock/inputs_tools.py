"""Declared dependencies in the tools' own tables: Poetry (``[tool.poetry.dependencies]``
and groups), PDM (``[tool.pdm.dev-dependencies]``), uv (``constraint-dependencies``,
``override-dependencies``, workspace members). Each becomes a PEP 508 string with its
file and line, like a ``[project]`` dependency."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from agentguard.errors import UsageError
from agentguard.facts.names import canonical_name as canonicalize_name

MAX_WORKSPACE_MEMBERS = 256


def _poetry_constraint(spec: str) -> str:
    """Poetry's constraint syntax, clause by clause (``^1.2``, ``~1.2``, ``1.2.*``, ``>=1,<2``)."""
    spec = spec.strip()
    if spec in ("", "*"):
        return ""
    if "||" in spec or "|" in spec:
        raise UsageError(f"Poetry constraint {spec!r}: an `||` union has no PEP 440 form")
    from agentguard.facts.installs import poetry_to_pep440  # (only for Poetry)

    spec = re.sub(r"([<>=!^~])\s+(?=[\d*])", r"\1", spec)  # Poetry allows `>= 1.2, < 2`
    parts = [p.strip() for p in re.split(r"[,\s]+(?=[<>=!^~\d])", spec) if p.strip()]
    return ",".join(c for c in (poetry_to_pep440(p) for p in parts) if c)


def poetry_dependency(name: str, spec: Any, *, extras_wanted: set[str]) -> list[str]:
    """One ``[tool.poetry.dependencies]`` entry as PEP 508 strings (several when Poetry lists
    one constraint per marker); none when it is not from an index (git, path, url) or is
    optional and not wanted."""
    if isinstance(spec, list):
        return [r for s in spec for r in poetry_dependency(name, s, extras_wanted=extras_wanted)]
    if isinstance(spec, str):
        return [f"{name}{_poetry_constraint(spec)}"]
    if not isinstance(spec, dict):
        raise UsageError(f"[tool.poetry.dependencies].{name}: unsupported value {spec!r}")
    if any(k in spec for k in ("git", "path", "url")):
        return []
    if spec.get("optional") and not extras_wanted:
        return []
    extras = spec.get("extras") or []
    text = name + (f"[{','.join(extras)}]" if extras else "")
    text += _poetry_constraint(str(spec.get("version", "")))
    marker = spec.get("markers")
    if isinstance(marker, str) and marker:
        text += f" ; {marker}"
    return [text]


def poetry_inputs(
    data: dict[str, Any], groups: tuple[str, ...], extras: tuple[str, ...]
) -> tuple[list[tuple[str, str]], str | None, list[str]]:
    """(requirement, table) pairs, requires-python and the selection, from [tool.poetry]."""
    poetry = data.get("tool", {}).get("poetry", {})
    deps = poetry.get("dependencies", {})
    if not isinstance(deps, dict):
        raise UsageError("[tool.poetry.dependencies] must be a table")
    out: list[tuple[str, str]] = []
    requires_python = None
    wanted: set[str] = {str(canonicalize_name(e)) for e in extras}
    for name, spec in deps.items():
        if name == "python":
            requires_python = _poetry_constraint(str(spec)) or None
            continue
        out.extend((r, name) for r in poetry_dependency(name, spec, extras_wanted=wanted))
    selection: list[str] = []
    tables = poetry.get("group", {}) if isinstance(poetry.get("group"), dict) else {}
    by_norm = {canonicalize_name(k): k for k in tables}
    for group in groups:
        key = by_norm.get(canonicalize_name(group))
        if key is None:
            if group in ("dev",) and isinstance(poetry.get("dev-dependencies"), dict):
                items = poetry["dev-dependencies"]  # Poetry before 1.2
            else:
                raise UsageError(
                    f"no Poetry group {group!r} (have: {', '.join(sorted(tables)) or 'none'})"
                )
        else:
            items = tables[key].get("dependencies", {})
        for name, spec in items.items():
            out.extend((r, name) for r in poetry_dependency(name, spec, extras_wanted=wanted))
        selection.append(f"group:{canonicalize_name(group)}")
    return out, requires_python, selection


def pdm_dev_group(data: dict[str, Any], group: str) -> list[str] | None:
    """PDM's ``[tool.pdm.dev-dependencies]`` group (PEP 508 strings), or None if absent."""
    dev = data.get("tool", {}).get("pdm", {}).get("dev-dependencies", {})
    if not isinstance(dev, dict):
        return None
    by_norm = {canonicalize_name(k): k for k in dev}
    key = by_norm.get(canonicalize_name(group))
    if key is None:
        return None
    items = dev[key]
    if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
        raise UsageError(f"[tool.pdm.dev-dependencies].{key} must be a list of strings")
    return [i for i in items if not i.startswith("-e ")]


def uv_constraints(data: dict[str, Any]) -> list[str]:
    """uv's ``constraint-dependencies`` and ``override-dependencies`` (both cap what uv locks)."""
    uv = data.get("tool", {}).get("uv", {})
    out: list[str] = []
    for key in ("constraint-dependencies", "override-dependencies"):
        items = uv.get(key, []) if isinstance(uv, dict) else []
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
            raise UsageError(f"[tool.uv].{key} must be a list of requirement strings")
        out.extend(items)
    return out


def uv_workspace_members(root: Path, data: dict[str, Any]) -> list[Path]:
    """The pyproject.toml of each uv workspace member (globs expanded, inside the root)."""
    ws = data.get("tool", {}).get("uv", {}).get("workspace", {})
    if not isinstance(ws, dict):
        return []
    members = ws.get("members", [])
    exclude = ws.get("exclude", [])
    if not isinstance(members, list) or not isinstance(exclude, list):
        raise UsageError("[tool.uv.workspace] members/exclude must be lists of globs")
    real_root = root.resolve()
    skipped = {p.resolve() for g in exclude if isinstance(g, str) for p in root.glob(g)}
    out: list[Path] = []
    for pattern in members:
        if not isinstance(pattern, str) or pattern.startswith("/") or ".." in pattern:
            raise UsageError(
                f"[tool.uv.workspace] member {pattern!r} must be a path inside the project"
            )
        for folder in sorted(root.glob(pattern)):
            py = folder / "pyproject.toml"
            real = folder.resolve()
            if real == real_root or real in skipped or not py.is_file():
                continue
            if not real.is_relative_to(real_root):
                raise UsageError(f"workspace member {pattern!r} links outside the project")
            out.append(py)
            if len(out) > MAX_WORKSPACE_MEMBERS:
                raise UsageError(f"more than {MAX_WORKSPACE_MEMBERS} workspace members")
    return out
