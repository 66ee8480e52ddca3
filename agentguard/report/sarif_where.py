"""Where a SARIF result points: URIs relative to the repository root, and a physical
location for every result.

GitHub code scanning reads ``physicalLocation.artifactLocation.uri`` as a path from the
root of the repository it uploads to, and refuses a result without a location. Report
paths are relative to the report's target (a project folder, the folder of a compose
file); here they are rebased onto the repository root: ``--sarif-root`` when given, else
the git top level above the target (the nearest folder holding ``.git``), else the target.

Paths inside an image (a location with a layer, or an absolute path that is not a file of
the repository) are not files of the repository: they carry the ``IMAGEROOT`` base.
Dependency findings (located by a dependency path) take the requirement's line in the
inputs or the pin's line in the lock from the report's ``requirement_sites`` facts.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from urllib.parse import quote

from agentguard.findings import Finding, JSONValue, Location, Report

SRCROOT = "%SRCROOT%"
IMAGEROOT = "IMAGEROOT"
_SAFE = "/._-~+@"


def git_top_level(start: Path) -> Path | None:
    """The nearest folder at or above ``start`` that holds ``.git`` (a folder, or the file a
    worktree or submodule has), like ``git rev-parse --show-toplevel``."""
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return None


@dataclass(frozen=True)
class Where:
    """How one report's paths map onto the repository."""

    root: Path  # absolute: URIs are relative to it
    base: Path | None  # absolute folder the report's paths are relative to (None: an image)
    target: str  # the report's target as the automation id names it ("": the root itself)
    images: tuple[str, ...] = ()  # images inspected beside a folder (check --image)

    @classmethod
    def of(cls, report: Report, sarif_root: Path | None = None) -> Where:
        raw = report.provenance.target
        base: Path | None = None
        if raw:
            path = Path(raw)
            if path.is_dir():
                base = path.resolve()
            elif path.is_file():
                base = path.resolve().parent
        start = base if base is not None else Path.cwd().resolve()
        root = sarif_root.resolve() if sarif_root else (git_top_level(start) or start)
        if base is None:
            target = raw or "-"
        else:
            full = Path(raw or ".").resolve()
            rel = os.path.relpath(full, root)
            target = "" if rel == "." else PurePosixPath(Path(rel)).as_posix()
        named = report.provenance.inputs.get("images")
        images = tuple(i for i in named if isinstance(i, str)) if isinstance(named, list) else ()
        return cls(root, base, target, images)

    def original_uri_base_ids(self, used: set[str]) -> dict[str, JSONValue]:
        out: dict[str, JSONValue] = {
            SRCROOT: {
                "uri": self.root.as_uri() + "/",
                "description": {"text": "The repository root: result URIs are relative to it."},
            }
        }
        if IMAGEROOT in used:
            out[IMAGEROOT] = {
                "description": {
                    "text": "The root of the inspected image's file system (not a repository path)."
                }
            }
        return out

    def artifact(self, path: str, *, in_image: bool) -> dict[str, JSONValue]:
        """An artifactLocation for a report path."""
        if in_image or (path.startswith("/") and self.base is None):
            return {"uri": quote(path.lstrip("/") or ".", safe=_SAFE), "uriBaseId": IMAGEROOT}
        full = Path(os.path.normpath((self.base or self.root) / path))
        rel = os.path.relpath(full, self.root)
        if rel == ".." or rel.startswith("../"):
            return {"uri": full.as_uri()}  # outside the repository: an absolute URI
        return {"uri": _relative_uri(PurePosixPath(Path(rel)).as_posix()), "uriBaseId": SRCROOT}

    def target_artifact(self, f: Finding | None = None) -> dict[str, JSONValue]:
        """Where a finding with no file of its own is shown: the image it is about (an image's
        configuration: its location's note names the image), else the target itself."""
        for ref in self.images:
            if f is not None and any(
                (loc.note or "").startswith(f"image {ref} ") for loc in f.locations
            ):
                return image_artifact(ref)
        if self.base is None:
            return image_artifact(self.target)
        rel = os.path.relpath(self.base, self.root)
        if rel.startswith(".."):
            return {"uri": self.base.as_uri() + "/"}
        return {"uri": _relative_uri(PurePosixPath(Path(rel)).as_posix()), "uriBaseId": SRCROOT}


def image_artifact(ref: str) -> dict[str, JSONValue]:
    """An image (a reference, or the path of a saved image) as the artifact."""
    return {"uri": _relative_uri(ref.lstrip("/")), "uriBaseId": IMAGEROOT}


def _relative_uri(path: str) -> str:
    """A relative reference: a ':' in the first segment is escaped so that ``agent:1`` is not
    read as a URI scheme."""
    return quote(path, safe=_SAFE) or "."


def requirement_sites(report: Report) -> Mapping[str, Mapping[str, Mapping[str, JSONValue]]]:
    """The lock facts' ``requirement_sites`` (``lock`` and ``lock --check`` put them at the
    top of the facts; ``check`` under its lock step)."""
    facts = report.facts
    sites = facts.get("requirement_sites")
    if not isinstance(sites, dict):
        steps = facts.get("steps")
        lock = steps.get("lock") if isinstance(steps, dict) else None
        sites = lock.get("requirement_sites") if isinstance(lock, dict) else None
    return sites if isinstance(sites, dict) else {}


def _package_names(f: Finding) -> list[str]:
    names: list[str] = []
    for key in ("child", "package"):
        value = f.evidence.get(key)
        if isinstance(value, str):
            names.append(value)
    for loc in f.locations:
        if len(loc.dependency_path) > 1:
            names.append(loc.dependency_path[-1].split("==")[0])
    return names


def dependency_site(f: Finding, report: Report) -> Location | None:
    """The file and line for a finding located only by a dependency path: the package's own
    requirement, else its pin in the lock, else the direct requirement it comes through."""
    sites = requirement_sites(report)
    declared, pinned = sites.get("declared", {}), sites.get("pinned", {})
    names = _package_names(f)
    direct = [
        loc.dependency_path[1].split("==")[0] for loc in f.locations if len(loc.dependency_path) > 1
    ]
    for table, candidates in ((declared, names), (pinned, names), (declared, direct)):
        for name in candidates:
            site = table.get(name) if isinstance(table, dict) else None
            if isinstance(site, dict) and isinstance(site.get("path"), str):
                line = site.get("line")
                return Location(path=site["path"], line=line if isinstance(line, int) else None)
    return None
