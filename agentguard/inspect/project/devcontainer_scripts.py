"""The scripts a devcontainer's lifecycle commands run (``"postCreateCommand": "bash
.devcontainer/startup.sh"``, as microsoft/autogen's is): read like the command itself, so
the installs and socket changes inside them are seen. A command runs in the workspace
folder: the folder that holds ``.devcontainer/`` (or the ``.devcontainer.json``). Facts
only; the script files are handed over by the project scan (kind "devcontainer-script":
shell scripts in a ``.devcontainer`` folder)."""

from __future__ import annotations

import dataclasses
import posixpath
import re
from collections.abc import Mapping

from agentguard.inspect.project.devcontainer_facts import DevcontainerFacts

# `bash x.sh`, `sh -e x.sh`, `source x.sh`, `. x.sh`, `./x.sh`, `x.sh` at a command's start
_RUN_SCRIPT = re.compile(
    r"(?:^|[;&|]\s*|\bthen\s+|\bdo\s+)"
    r"(?:(?:ba|z|da)?sh\s+(?:-\w+\s+)*|source\s+|\.\s+)?"
    r"(?P<path>(?:\./)?[\w./${}-]+\.sh)\b",
    re.M,
)


def workspace_root(path: str) -> str:
    """The folder a devcontainer's commands run in (relative to the project root)."""
    folder = posixpath.dirname(path)
    if posixpath.basename(folder) == ".devcontainer":
        folder = posixpath.dirname(folder)
    elif posixpath.basename(posixpath.dirname(folder)) == ".devcontainer":
        folder = posixpath.dirname(posixpath.dirname(folder))  # .devcontainer/NAME/...
    return folder


def attach_scripts(dc: DevcontainerFacts, scripts: Mapping[str, str]) -> DevcontainerFacts:
    """``dc`` with the scripts its lifecycle commands run (those the project holds)."""
    root = workspace_root(dc.path)
    found: list[tuple[str, str, str]] = []
    for key, command, _line in dc.commands:
        for m in _RUN_SCRIPT.finditer(command):
            rel = m.group("path").replace("${containerWorkspaceFolder}/", "")
            path = (
                posixpath.normpath(posixpath.join(root, rel)) if root else posixpath.normpath(rel)
            )
            if path in scripts and (key, path) not in {(k, p) for k, p, _ in found}:
                found.append((key, path, scripts[path]))
    return dataclasses.replace(dc, scripts=tuple(found)) if found else dc
