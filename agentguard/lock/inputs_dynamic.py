"""``dynamic = ["dependencies"]``: dependencies the build backend computes.

Two cases, neither runs anything from the project:

- setuptools reading them from files (``[tool.setuptools.dynamic] dependencies = {file =
  [...]}``, and the same for optional dependencies): the files are read here, line by line
  as setuptools reads them (one requirement a line, ``#`` comments);
- anything else (a hatch metadata hook, PDM's, a ``setup.py``): they are **unknown**. What
  the project's lock recorded for its own package is then the best record there is (uv.lock
  holds the root's ``requires-dist``); the caller says so, with a skipped source.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentguard import safeio
from agentguard.errors import UsageError

MAX_DYNAMIC_FILE_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class DynamicLine:
    text: str  # str(Requirement)
    file: str  # relative to the project
    line: int


@dataclass(frozen=True)
class Dynamic:
    """What `dynamic` names, read as far as it can be without running the backend."""

    how: str  # "setuptools files requirements.txt", "a hatch metadata hook", ...
    dependencies: tuple[DynamicLine, ...] | None  # None: unknown
    optional: dict[str, tuple[DynamicLine, ...]] | None  # None: unknown (or not dynamic)
    why_unknown: str | None = None  # set when dependencies or optional are unknown


def _backend(data: dict[str, Any]) -> str:
    system = data.get("build-system")
    backend = system.get("build-backend") if isinstance(system, dict) else None
    tool = data.get("tool")
    tool = tool if isinstance(tool, dict) else {}
    if (isinstance(backend, str) and backend.startswith("hatchling")) or "hatch" in tool:
        return "the hatch build backend (a metadata hook)"
    if (isinstance(backend, str) and backend.startswith("pdm")) or "pdm" in tool:
        return "the PDM build backend"
    if isinstance(backend, str) and backend:
        return f"the build backend {backend}"
    return "the build backend (setup.py)"


def _files(spec: Any) -> list[str] | None:
    if isinstance(spec, dict) and set(spec) == {"file"}:
        files = spec["file"]
        files = [files] if isinstance(files, str) else files
        if isinstance(files, list) and files and all(isinstance(f, str) for f in files):
            return files
    return None


def _read_file(root: Path, name: str) -> tuple[DynamicLine, ...]:
    """One requirement a line; a line that is not one (an option, `-r`) is refused, as
    setuptools refuses it."""
    path = (root / name).resolve()
    if not path.is_relative_to(root.resolve()):
        raise UsageError(f"{name} is outside the project; agentguard does not read it")
    try:
        text = safeio.read_text(path, root=root.resolve(), cap=MAX_DYNAMIC_FILE_BYTES)
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{name}: cannot read ({exc})") from None
    from packaging.requirements import InvalidRequirement, Requirement

    out: list[DynamicLine] = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        try:
            req = Requirement(line)
        except InvalidRequirement:
            raise UsageError(
                f"{name}:{lineno}: not a requirement (setuptools reads one a line)"
            ) from None
        out.append(DynamicLine(str(req), name, lineno))
    return tuple(out)


def read_dynamic(root: Path, data: dict[str, Any], project: dict[str, Any]) -> Dynamic | None:
    """None when neither dependencies nor optional-dependencies are dynamic."""
    dynamic = project.get("dynamic") or []
    if not isinstance(dynamic, list):
        return None
    deps_dynamic = "dependencies" in dynamic
    opt_dynamic = "optional-dependencies" in dynamic
    if not (deps_dynamic or opt_dynamic):
        return None
    tool = data.get("tool") if isinstance(data.get("tool"), dict) else {}
    setuptools = tool.get("setuptools") if isinstance(tool, dict) else None
    table = setuptools.get("dynamic") if isinstance(setuptools, dict) else None
    table = table if isinstance(table, dict) else {}
    why: str | None = None
    deps: tuple[DynamicLine, ...] | None = None
    optional: dict[str, tuple[DynamicLine, ...]] | None = None
    used: list[str] = []
    try:
        if deps_dynamic:
            files = _files(table.get("dependencies"))
            if files is not None:
                deps = tuple(d for f in files for d in _read_file(root, f))
                used += files
            else:
                why = f"computed by {_backend(data)}, which agentguard does not run"
        if opt_dynamic:
            groups = table.get("optional-dependencies")
            if isinstance(groups, dict) and all(_files(v) is not None for v in groups.values()):
                optional = {}
                for extra, spec in groups.items():
                    names = _files(spec) or []
                    optional[str(extra)] = tuple(d for f in names for d in _read_file(root, f))
                    used += names
            else:
                why = (
                    why
                    or f"optional ones computed by {_backend(data)}, which agentguard does not run"
                )
    except UsageError as exc:
        deps, optional, why = None, None, f"the file setuptools reads them from: {exc}"
    how = (
        f"read by setuptools from {', '.join(dict.fromkeys(used))}"
        if used and why is None
        else _backend(data)
    )
    return Dynamic(how, deps, optional if opt_dynamic else {}, why)
