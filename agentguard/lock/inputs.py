"""Reading a project's declared dependencies: PEP 621 pyproject.toml or requirements.in."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentguard import redact, safeio
from agentguard.errors import UsageError
from agentguard.facts.names import canonical_name as canonicalize_name
from agentguard.lock.plain_requirements import is_plain, plain_python_floor
from agentguard.tomllines import TomlLines

if TYPE_CHECKING:
    from packaging.requirements import Requirement

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

MAX_INPUT_BYTES = 4 * 1024 * 1024
MAX_INCLUDE_DEPTH = 16


@dataclass(frozen=True)
class DeclaredRequirement:
    text: str  # normalised: str(Requirement)
    file: str  # relative to the project root
    line: int | None

    @property
    def requirement(self) -> Requirement:
        from packaging.requirements import Requirement

        return Requirement(self.text)

    @property
    def name(self) -> str:
        return canonicalize_name(self.requirement.name)


@dataclass(frozen=True)
class ProjectInputs:
    root: Path
    source: str  # "pyproject.toml" or "requirements.in"
    requirements: tuple[DeclaredRequirement, ...]
    requires_python: str | None
    selection: tuple[str, ...]  # ("extra:x", "group:y")
    # uv's constraint- and override-dependencies: caps uv applies, not requirements
    constraints: tuple[DeclaredRequirement, ...] = ()
    # `dynamic = ["dependencies"]`: what computes them (:mod:`.inputs_dynamic`), and why
    # they are unknown when they are (``requirements`` is then empty: not "none")
    dynamic_from: str | None = None
    dynamic_unknown: str | None = None
    # a uv workspace root with no [project] (`[tool.uv.workspace]` only): no package of its own
    virtual_root: bool = False

    @property
    def input_hash(self) -> str:
        """ "sha256:<hex>" over the normalised inputs. Made when asked: a re-lock starts its
        resolver before anything needs it, and hashlib and json cost 5 ms to import."""
        return _hash_inputs(self.requirements, self.requires_python, self.selection)

    def requirement_lines(self) -> list[str]:
        return [r.text for r in self.requirements]

    def constraint_lines(self) -> list[str]:
        return [r.text for r in self.constraints]


def _check_python_spec(requires_python: str) -> None:
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        SpecifierSet(requires_python)
    except InvalidSpecifier:
        raise UsageError(
            f"[project].requires-python {requires_python!r} is not a valid specifier"
        ) from None


def _hash_inputs(
    reqs: tuple[DeclaredRequirement, ...], requires_python: str | None, selection: tuple[str, ...]
) -> str:
    import hashlib
    import json

    blob = json.dumps(
        {
            "requirements": sorted(r.text for r in reqs),
            "requires_python": requires_python,
            "selection": sorted(selection),
        },
        sort_keys=True,
    )
    return "sha256:" + hashlib.sha256(blob.encode()).hexdigest()


def _read_text(path: Path) -> str:
    try:
        return safeio.read_text(path, cap=MAX_INPUT_BYTES)
    except safeio.TooLarge as exc:
        raise UsageError(
            f"{path.name}: {exc.size} bytes, over the {MAX_INPUT_BYTES} byte cap: not read"
        ) from None
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path.name}: not UTF-8 ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot read ({exc.strerror or exc})") from None


def _req(text: str, file: str, line: int | None, allow_url: bool = False) -> DeclaredRequirement:
    if is_plain(text):  # its own normal form, no URL (and packaging not imported for it)
        return DeclaredRequirement(text, file, line)
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        req = Requirement(text)
    except InvalidRequirement as exc:
        where = f"{file}:{line}" if line else file
        raise UsageError(
            f"{where}: invalid requirement {redact.quote(text)}: "
            f"{redact.quote(str(exc).splitlines()[0] if str(exc) else '')}"
        ) from None
    if req.url and not allow_url:
        raise UsageError(
            f"{file}: direct URL requirement {req.name} @ ... cannot be hash-locked from an index"
        )
    return DeclaredRequirement(str(req), file, line)


def read_pyproject(
    root: Path,
    extras: tuple[str, ...],
    all_extras: bool,
    groups: tuple[str, ...],
    allow_urls: bool = False,
) -> ProjectInputs:
    """``allow_urls``: direct URL requirements are kept (the project's own lock tool, uv,
    locks them; agentguard's own lock cannot hash-lock them from an index)."""
    path = root / "pyproject.toml"
    text = _read_text(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"pyproject.toml is not valid TOML: {exc}") from None
    except RecursionError:  # tomllib recurses per nesting level
        raise UsageError("pyproject.toml is nested too deeply to read") from None
    project = data.get("project")
    if not isinstance(project, dict) and _poetry_table(data):
        return _read_poetry(root, text, data, extras, groups)
    virtual = not isinstance(project, dict) and is_virtual_workspace(data)
    if virtual:
        project = {}  # the workspace root: its members and its dependency groups
    if not isinstance(project, dict):
        raise UsageError("pyproject.toml has no [project] table (PEP 621)")
    from agentguard.lock.inputs_dynamic import read_dynamic

    dynamic = read_dynamic(root, data, project)
    lines = TomlLines(text)
    if dynamic is not None and "dependencies" in project.get("dynamic", []):
        reqs = [_req(d.text, d.file, d.line, allow_urls) for d in dynamic.dependencies or ()]
    else:
        deps = project.get("dependencies", [])
        if not isinstance(deps, list) or not all(isinstance(d, str) for d in deps):
            raise UsageError("[project.dependencies] must be a list of requirement strings")
        reqs = [_req(d, "pyproject.toml", lines.first(d), allow_urls) for d in deps]
    selection: list[str] = []

    optional = project.get("optional-dependencies", {})
    if dynamic is not None and dynamic.optional:
        optional = {k: [d.text for d in v] for k, v in dynamic.optional.items()}
    if not isinstance(optional, dict):
        raise UsageError("[project.optional-dependencies] must be a table")
    wanted = sorted(optional) if all_extras else list(extras)
    for extra in wanted:
        names = {canonicalize_name(k): k for k in optional}
        key = names.get(canonicalize_name(extra))
        if key is None:
            raise UsageError(
                f"no optional-dependencies group {extra!r} (have: {', '.join(sorted(optional)) or 'none'})"
            )
        items = optional[key]
        if not isinstance(items, list) or not all(isinstance(d, str) for d in items):
            raise UsageError(f"[project.optional-dependencies].{key} must be a list of strings")
        reqs.extend(_req(d, "pyproject.toml", lines.first(d), allow_urls) for d in items)
        selection.append(f"extra:{canonicalize_name(key)}")

    dep_groups = data.get("dependency-groups", {})
    if not isinstance(dep_groups, dict):
        raise UsageError("[dependency-groups] must be a table")
    from agentguard.lock.inputs_tools import pdm_dev_group, uv_constraints

    for group in groups:
        pdm = None
        if canonicalize_name(group) not in {canonicalize_name(k) for k in dep_groups}:
            pdm = pdm_dev_group(data, group)  # PDM's own dev groups
        for d in pdm if pdm is not None else _expand_group(dep_groups, group, ()):
            reqs.append(_req(d, "pyproject.toml", lines.first(d), allow_urls))
        selection.append(f"group:{canonicalize_name(group)}")
    constraints = tuple(_req(d, "pyproject.toml", lines.first(d)) for d in uv_constraints(data))

    requires_python = project.get("requires-python")
    if requires_python is not None:
        if not isinstance(requires_python, str):
            raise UsageError("[project].requires-python must be a string")
        if plain_python_floor(requires_python) is None:
            _check_python_spec(requires_python)
    reqs = _dedupe(reqs)
    return ProjectInputs(
        root,
        "pyproject.toml",
        tuple(reqs),
        requires_python,
        tuple(selection),
        constraints,
        dynamic_from=dynamic.how if dynamic is not None else None,
        dynamic_unknown=dynamic.why_unknown if dynamic is not None else None,
        virtual_root=virtual,
    )


def is_virtual_workspace(data: dict[str, Any]) -> bool:
    """A pyproject.toml with `[tool.uv.workspace]` and no [project]: uv's virtual root."""
    tool = data.get("tool")
    uv = tool.get("uv") if isinstance(tool, dict) else None
    return isinstance(uv, dict) and isinstance(uv.get("workspace"), dict)


def _poetry_table(data: dict[str, Any]) -> bool:
    poetry = data.get("tool", {}).get("poetry")
    return isinstance(poetry, dict) and isinstance(poetry.get("dependencies"), dict)


def _read_poetry(
    root: Path, text: str, data: dict[str, Any], extras: tuple[str, ...], groups: tuple[str, ...]
) -> ProjectInputs:
    """A Poetry project without a [project] table: [tool.poetry.dependencies] and groups."""
    from agentguard.lock.inputs_tools import poetry_inputs

    pairs, requires_python, selection = poetry_inputs(data, groups, extras)
    lines = TomlLines(text)  # (indexed once: a scan per key is quadratic)
    reqs = _dedupe([_req(r, "pyproject.toml", lines.key(key)) for r, key in pairs])
    return ProjectInputs(
        root,
        "pyproject.toml",
        tuple(reqs),
        requires_python,
        tuple(selection),
    )


def _expand_group(groups: dict[str, Any], name: str, stack: tuple[str, ...]) -> list[str]:
    """PEP 735: a group is a list of requirement strings and {include-group = "..."} tables."""
    by_norm = {canonicalize_name(k): k for k in groups}
    key = by_norm.get(canonicalize_name(name))
    if key is None:
        raise UsageError(
            f"no dependency group {name!r} (have: {', '.join(sorted(groups)) or 'none'})"
        )
    if key in stack:
        raise UsageError(f"dependency group {key!r} includes itself ({' -> '.join((*stack, key))})")
    out: list[str] = []
    items = groups[key]
    if not isinstance(items, list):
        raise UsageError(f"[dependency-groups].{key} must be a list")
    for item in items:
        if isinstance(item, str):
            out.append(item)
        elif (
            isinstance(item, dict)
            and set(item) == {"include-group"}
            and isinstance(item["include-group"], str)
        ):
            out.extend(_expand_group(groups, item["include-group"], (*stack, key)))
        else:
            raise UsageError(f"[dependency-groups].{key}: unsupported entry {item!r}")
    return out


def _dedupe(reqs: list[DeclaredRequirement]) -> list[DeclaredRequirement]:
    seen: set[str] = set()
    out: list[DeclaredRequirement] = []
    for r in reqs:
        if r.text not in seen:
            seen.add(r.text)
            out.append(r)
    return out


def read_requirements_in(
    root: Path, path: Path | None = None, depth: int = 0
) -> list[DeclaredRequirement]:
    path = path or root / "requirements.in"
    if depth > MAX_INCLUDE_DEPTH:
        raise UsageError(f"{path.name}: -r includes nested deeper than {MAX_INCLUDE_DEPTH}")
    if not path.resolve().is_relative_to(root.resolve()):  # a symlink leading elsewhere
        raise UsageError(f"{path.name} links outside the project; agentguard does not follow it")
    text = _read_text(path)
    rel = str(path.relative_to(root)) if path.is_relative_to(root) else path.name
    out: list[DeclaredRequirement] = []
    logical = ""
    start = 0
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split(" #", 1)[0].strip() if not raw.lstrip().startswith("#") else ""
        if not logical:
            start = lineno
        if line.endswith("\\"):
            logical += line[:-1] + " "
            continue
        logical += line
        entry, logical = logical.strip(), ""
        if not entry:
            continue
        if entry.startswith(("-r ", "--requirement ")):
            named = entry.split(None, 1)[1].strip()
            include = (path.parent / named).resolve()
            if not include.is_relative_to(root.resolve()):
                # an input from an untrusted branch must not make us read (and quote in an
                # error) a file elsewhere on the machine, e.g. `-r /etc/shadow`
                raise UsageError(
                    f"{rel}:{start}: -r {named} points outside the project; keep included "
                    "requirement files inside it"
                )
            out.extend(read_requirements_in(root, include, depth + 1))
        elif entry.startswith("-"):
            raise UsageError(
                f"{rel}:{start}: option line {entry.split()[0]!r} is not supported in lock inputs; "
                "pass index options to `agentguard lock` instead"
            )
        else:
            out.append(_req(entry, rel, start))
    return out


def _declares_project(path: Path) -> bool:
    """A pyproject.toml with only tool settings does not declare dependencies."""
    try:
        data = tomllib.loads(_read_text(path))
        return "project" in data or _poetry_table(data) or is_virtual_workspace(data)
    except (ValueError, RecursionError, MemoryError):  # (a TOML error, a 4301-digit int)
        return True  # let read_pyproject report the syntax error


def read_inputs(
    root: Path,
    *,
    extras: tuple[str, ...] = (),
    all_extras: bool = False,
    groups: tuple[str, ...] = (),
    allow_urls: bool = False,
) -> ProjectInputs:
    if not root.is_dir():
        raise UsageError(f"{root}: not a folder")
    has_pyproject = (root / "pyproject.toml").is_file() and _declares_project(
        root / "pyproject.toml"
    )
    has_in = (root / "requirements.in").is_file()
    if has_pyproject and has_in:
        raise UsageError(
            "both pyproject.toml and requirements.in declare dependencies here; agentguard will not "
            "pick one: move the requirements into one of them"
        )
    if has_pyproject:
        return read_pyproject(root, extras, all_extras, groups, allow_urls)
    if has_in:
        if extras or all_extras or groups:
            raise UsageError("--extra/--all-extras/--group need a pyproject.toml")
        reqs = _dedupe(read_requirements_in(root.resolve()))
        return ProjectInputs(root, "requirements.in", tuple(reqs), None, ())
    raise UsageError(f"{root}: no pyproject.toml or requirements.in to lock")
