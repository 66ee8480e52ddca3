"""The ``containers`` facts of a report: what was read of each container and build file."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentguard.findings import JSONValue

if TYPE_CHECKING:
    from agentguard.inspect.project.containers import _Gathered


def build_files_json(g: _Gathered) -> dict[str, JSONValue]:
    """The ``containers`` facts of a report: what was read of each file, for JSON readers."""
    return {
        "dockerfiles": [
            {
                "path": df.path,
                "parser": df.parser,
                "stages": [
                    {"base": s.base, "name": s.name, "user": s.user, "workdir": s.workdir}
                    for s in df.stages
                ],
            }
            for df in g.dockerfiles.values()
        ],
        "compose_files": [
            {
                "path": cf.path,
                "services": [s.name for s in cf.services],
                "schema_valid": not cf.schema_errors,
            }
            for cf in g.composes.values()
        ],
        "devcontainers": [
            {
                "path": dc.path,
                "workspace_folder": dc.workspace_folder.value,
                "workspace_mount": dc.workspace_mount.origin if dc.workspace_mount else None,
            }
            for dc in g.devcontainers.values()
        ],
    }
