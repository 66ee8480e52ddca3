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
_MAX_ENVIRONMENTS = 4096  # per pair: beyond this, no difference found counts as the same
# per comparison of two lists: beyond it (only a crafted file gets there), markers are
# compared as written, so a file cannot make the check slow; at worst it reports itself
_BUDGET = 20_000


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
    name, range and extras exactly, markers by meaning; names in ``skip`` left out.

    Entries written the same are paired first; only the rest are compared by meaning, within
    one evaluation budget for the whole comparison (a crafted file cannot make it slow)."""
    now = [p for p in map(_parse, declared) if p and p[0][0] not in skip]
    then = [p for p in map(_parse, recorded) if p and p[0][0] not in skip]
    written: dict[tuple[Key, str], list[int]] = {}
    for i, (k, m) in enumerate(then):
        written.setdefault((k, uv_form(m)), []).append(i)
    taken: set[int] = set()
    pending: list[tuple[Key, Marker | None]] = []
    for key, marker in now:
        same = written.get((key, uv_form(marker)))
        if same:
            taken.add(same.pop())
        else:
            pending.append((key, marker))
    left = [p for i, p in enumerate(then) if i not in taken]
    budget = [_BUDGET]
    added: list[tuple[Key, Marker | None]] = []
    for key, marker in pending:
        if budget[0] <= 0:  # (only a crafted file gets here)
            added.append((key, marker))
            continue
        match = next(
            (i for i, (k, m) in enumerate(left) if k == key and same_marker(marker, m, budget)),
            None,
        )
        if match is None:
            added.append((key, marker))
        else:
            left.pop(match)
    return sorted(map(_show_parsed, added)), sorted(map(_show_parsed, left))


def uv_form(marker: Marker | None) -> str:
    """A marker in the spelling uv writes for its most common rewrites (``python_version``
    as ``python_full_version``, ``platform_system`` as ``sys_platform``), so that most pairs
    match as written; what this does not cover is compared by meaning."""
    if marker is None:
        return ""
    try:
        return str(Marker(_spell(marker._markers)))
    except (InvalidMarker, InvalidVersion, ValueError, TypeError, AttributeError):
        return str(marker)


_SYSTEM_PLATFORM = {v: k for k, v in _PLATFORM_SYSTEM.items()}


def _spell(tree: Any) -> str:
    if isinstance(tree, list):
        return "(" + " ".join(_spell(t) for t in tree) + ")"
    if isinstance(tree, str):
        return tree
    lhs, op, rhs = tree
    if type(lhs).__name__ != "Variable" or type(rhs).__name__ != "Value":
        return f"{_side(lhs)} {op.value} {_side(rhs)}"
    var, o, val = str(lhs.value), str(op.value), str(rhs.value)
    if var == "platform_system" and o in ("==", "!=") and val in _SYSTEM_PLATFORM:
        return f"sys_platform {o} '{_SYSTEM_PLATFORM[val]}'"
    if var == "python_version" and "*" not in val:
        v = Version(val)
        a, b = (*v.release, 0)[:2]
        nxt = f"{a}.{b + 1}"
        spelled = {
            ">=": f"python_full_version >= '{val}'",
            "<": f"python_full_version < '{val}'",
            "<=": f"python_full_version < '{nxt}'",
            ">": f"python_full_version >= '{nxt}'",
            "==": f"python_full_version == '{a}.{b}.*'",
            "!=": f"python_full_version != '{a}.{b}.*'",
        }.get(o)
        if spelled is not None and len(v.release) <= 2:
            return spelled
    return f"{var} {o} '{val}'"


def _side(x: Any) -> str:
    return str(x.value) if type(x).__name__ == "Variable" else f"'{x.value}'"


def _show_parsed(item: tuple[Key, Marker | None]) -> str:
    (name, spec, extras, url), marker = item
    shown = name + (f"[{','.join(extras)}]" if extras else "") + ",".join(sorted(spec))
    shown += f" @ {url}" if url else ""
    return shown + (f" ; {marker}" if marker else "")


def same_marker(
    a: Marker | str | None, b: Marker | str | None, budget: list[int] | None = None
) -> bool:
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
    budget = budget if budget is not None else [_BUDGET]
    if budget[0] <= 0:
        return str(ma) == str(mb)
    for env in itertools.islice(_environments(values), min(_MAX_ENVIRONMENTS, budget[0])):
        budget[0] -= 1
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
        else:  # ("12345.6789": another value that reads as a version, for version fields)
            axes.append(sorted({*values[name], "", "\x00other", "12345.6789"}))
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
