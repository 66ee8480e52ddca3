"""The project's requirements the way uv records them in uv.lock, and the same comparison
uv makes (`uv lock --check`), so that the gate agrees with uv on every correct lock.

uv records each member's ``requires-dist`` after two steps, both re-done here:

- **lowering**: a requirement whose ``[tool.uv.sources]`` entry is a path, an editable, a
  workspace member, a git repository or a URL is recorded without its version range (the
  source decides the version); an ``index`` source keeps it. A source given as a list (one
  entry per marker) is not re-derived: such a name is left out of the comparison on both
  sides (:func:`unlowered_names`), never reported as changed.
- **markers in uv's normal form**: ``python_version >= "3.11"`` is recorded as
  ``python_full_version >= '3.11'``, ``python_version <= "3.11"`` as
  ``python_full_version < '3.12'``, ``platform_system == "Windows"`` as
  ``sys_platform == 'win32'``; clauses are reordered and simplified. Two markers are
  compared by what they mean (:func:`same_marker`: both are evaluated over every
  environment that tells their clauses apart), so no spelling of uv's is re-derived.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from typing import Any

from packaging.markers import InvalidMarker, Marker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

# the sources uv records instead of a version range
_NOT_RANGED = ("path", "workspace", "git", "url", "editable")
# uv reads `platform_system == 'Windows'` as `sys_platform == 'win32'` (and so on)
_PLATFORM_SYSTEM = {"win32": "Windows", "darwin": "Darwin", "linux": "Linux"}
_MAX_ENVIRONMENTS = 50_000  # beyond this, no difference found counts as the same


def sources_of(
    data: Mapping[str, Any], inherited: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """``[tool.uv.sources]`` by canonical name: a member's own entries over the workspace
    root's (``inherited``), as uv applies them."""
    out: dict[str, Any] = {}
    for table in (inherited or {}, _uv_sources(data)):
        for name, entry in table.items():
            out[canonicalize_name(str(name))] = entry
    return out


def _uv_sources(data: Mapping[str, Any]) -> dict[str, Any]:
    tool = data.get("tool")
    uv = tool.get("uv") if isinstance(tool, dict) else None
    sources = uv.get("sources") if isinstance(uv, dict) else None
    return dict(sources) if isinstance(sources, dict) else {}


def unlowered_names(sources: Mapping[str, Any]) -> frozenset[str]:
    """Names whose source is a list of entries (one per marker): not re-derived."""
    return frozenset(n for n, e in sources.items() if isinstance(e, list))


def lower(text: str, sources: Mapping[str, Any]) -> str:
    """One declared requirement as uv records it (its range dropped for a path, editable,
    workspace, git or URL source)."""
    try:
        req = Requirement(text)
    except InvalidRequirement:
        return text
    entry = sources.get(canonicalize_name(req.name))
    if isinstance(entry, dict) and any(k in entry for k in _NOT_RANGED):
        req.specifier = type(req.specifier)()
    return str(req)


def with_extra(text: str, extra: str) -> str:
    """An optional dependency as recorded in requires-dist: ``... ; (marker) and extra == 'x'``."""
    head, _, marker = text.partition(";")
    cond = f"extra == '{canonicalize_name(extra)}'"
    return f"{head.strip()} ; {f'({marker.strip()}) and ' if marker.strip() else ''}{cond}"


def declared_records(
    project: Mapping[str, Any], sources: Mapping[str, Any], optional: bool = True
) -> list[str]:
    """[project] dependencies (and optional dependencies) as uv records them."""
    out = [lower(d, sources) for d in project.get("dependencies", []) or [] if isinstance(d, str)]
    extras = project.get("optional-dependencies", {}) if optional else {}
    if isinstance(extras, dict):
        for extra, items in extras.items():
            for d in items if isinstance(items, list) else []:
                if isinstance(d, str):
                    out.append(with_extra(lower(d, sources), str(extra)))
    return out


# --- the comparison -------------------------------------------------------------------


Key = tuple[str, frozenset[str], tuple[str, ...], str]


def _parse(text: str) -> tuple[Key, Marker | None] | None:
    try:
        r = Requirement(text)
    except InvalidRequirement:
        return None
    key = (
        canonicalize_name(r.name),
        frozenset(str(s) for s in r.specifier),
        tuple(sorted(canonicalize_name(e) for e in r.extras)),
        "",  # (a direct URL: uv records it as its source, not compared here)
    )
    return key, r.marker


def differences(
    declared: Iterable[str], recorded: Iterable[str], skip: frozenset[str] = frozenset()
) -> tuple[list[str], list[str]]:
    """(declared and not recorded, recorded and no longer declared), as uv compares them:
    name, range, extras and URL exactly, markers by meaning; names in ``skip`` left out."""
    now = [p for p in map(_parse, declared) if p and p[0][0] not in skip]
    then = [p for p in map(_parse, recorded) if p and p[0][0] not in skip]
    left = list(then)
    added: list[tuple[Key, Marker | None]] = []
    for key, marker in now:
        match = next(
            (i for i, (k, m) in enumerate(left) if k == key and same_marker(marker, m)), None
        )
        if match is None:
            added.append((key, marker))
        else:
            left.pop(match)
    return sorted(map(_show_parsed, added)), sorted(map(_show_parsed, left))


def _show_parsed(item: tuple[Key, Marker | None]) -> str:
    (name, spec, extras, url), marker = item
    shown = name + (f"[{','.join(extras)}]" if extras else "") + ",".join(sorted(spec))
    shown += f" @ {url}" if url else ""
    return shown + (f" ; {marker}" if marker else "")


def same_marker(a: Marker | str | None, b: Marker | str | None) -> bool:
    """Whether two markers hold in exactly the same environments (uv's reading: the
    ``python_version`` of an interpreter is its ``python_full_version`` cut to two parts;
    ``platform_system`` follows ``sys_platform`` for Windows, macOS and Linux). An
    unparseable marker is the same only as itself."""
    if a is None and b is None:
        return True
    try:
        ma = Marker(a) if isinstance(a, str) else a
        mb = Marker(b) if isinstance(b, str) else b
    except InvalidMarker:
        return str(a) == str(b)
    if ma is not None and mb is not None and str(ma) == str(mb):
        return True
    values: dict[str, set[str]] = {}
    for m in (ma, mb):
        if m is not None:
            _collect(m._markers, values)
    for env in itertools.islice(_environments(values), _MAX_ENVIRONMENTS):
        if _holds(ma, env) != _holds(mb, env):
            return False
    return True


def _holds(marker: Marker | None, env: dict[str, str]) -> bool:
    if marker is None:
        return True
    try:
        return bool(marker.evaluate(env))
    except Exception:  # (an undefined comparison is false in uv, too)
        return False


def _collect(tree: Any, out: dict[str, set[str]]) -> None:
    """Each variable the marker names, with the literal values it compares against."""
    if isinstance(tree, list):
        for item in tree:
            _collect(item, out)
        return
    if not isinstance(tree, tuple) or len(tree) != 3:
        return
    lhs, op, rhs = tree
    for var, val in ((lhs, rhs), (rhs, lhs)):
        if type(var).__name__ == "Variable" and type(val).__name__ == "Value":
            name = str(var.value)
            if name == "python_version":
                name = "python_full_version"
            if name == "platform_system":
                out.setdefault("sys_platform", set())
            values = out.setdefault(name, set())
            values.add(str(val.value))
            if str(op.value) in ("in", "not in"):
                values.update(str(val.value).replace(",", " ").split())


def _python_points(literals: set[str]) -> list[str]:
    points = {(2, 0, 0), (99, 0, 0)}
    for lit in literals:
        try:
            v = Version(lit.rstrip(".*"))
        except InvalidVersion:
            continue
        a, b, c = (*v.release, 0, 0)[:3]
        points.update({(a, b, c), (a, b, c + 1), (a, b + 1, 0), (a, b, 0), (a, b, 1)})
        if c:
            points.add((a, b, c - 1))
        if b:
            points.add((a, b - 1, 99))
    return [".".join(map(str, p)) for p in sorted(points)]


def _environments(values: dict[str, set[str]]) -> Iterable[dict[str, str]]:
    names = sorted(values)
    axes: list[list[str]] = []
    for name in names:
        if name == "python_full_version":
            axes.append(_python_points(values[name]))
        elif name == "sys_platform":
            axes.append(sorted({*values[name], *_PLATFORM_SYSTEM, "\x00other"}))
        else:
            axes.append(sorted({*values[name], "", "\x00other"}))
    for combo in itertools.product(*axes):
        env = dict(zip(names, combo, strict=True))
        full = env.get("python_full_version")
        if full is not None:
            env["python_version"] = ".".join(full.split(".")[:2])
        platform = env.get("sys_platform")
        if platform in _PLATFORM_SYSTEM:
            env["platform_system"] = _PLATFORM_SYSTEM[platform]
        elif env.get("platform_system") in _PLATFORM_SYSTEM.values():
            continue  # (Windows, Darwin and Linux go with their sys_platform only)
        env.setdefault("extra", "")
        yield env
