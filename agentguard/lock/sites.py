"""Where each dependency is written down: its requirement's line in the inputs, its pin's line
in the lock.

Dependency findings (AG101, AG102, AG103...) are located by their dependency path, which is
not a place in a file. Code scanning needs one, so the lock reports carry this map in their
facts (``requirement_sites``) and the SARIF writer takes the file and line from it. The
findings themselves are left as they are: adding a file to their locations would change
their fingerprints and so every baseline already written.
"""

from __future__ import annotations

from pathlib import Path

from packaging.utils import canonicalize_name

from agentguard import safeio
from agentguard.findings import JSONValue
from agentguard.lock.inputs import ProjectInputs
from agentguard.lock.mutex import REQUIREMENTS_LOCK
from agentguard.safeio import MAX_LOCK_BYTES


def pin_lines(path: Path) -> dict[str, int]:
    """``name -> line`` of each pin in a requirements-format lock (first pin of a name)."""
    out: dict[str, int] = {}
    try:
        data = safeio.read_bytes(path, cap=MAX_LOCK_BYTES)
    except OSError:  # (too large, a link out, not a regular file: no lines, not a crash)
        return out
    for i, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
        s = line.strip()
        if s and s[0].isalnum():
            head = s.split("==")[0].split(";")[0].split()[0].split("[")[0]
            out.setdefault(canonicalize_name(head), i)
    return out


def requirement_sites(inputs: ProjectInputs) -> dict[str, JSONValue]:
    """``{"declared": {name: {"path", "line"}}, "pinned": {name: {"path", "line"}}}``,
    paths relative to the project root (the report's target)."""
    declared: dict[str, JSONValue] = {}
    for req in inputs.requirements:
        site: dict[str, JSONValue] = {"path": req.file}
        if req.line:
            site["line"] = req.line
        declared.setdefault(req.name, site)
    pinned: dict[str, JSONValue] = {
        name: {"path": REQUIREMENTS_LOCK, "line": line}
        for name, line in sorted(pin_lines(inputs.root / REQUIREMENTS_LOCK).items())
    }
    return {"declared": declared, "pinned": pinned}
