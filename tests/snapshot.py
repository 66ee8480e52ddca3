"""Snapshot helper: compare normalised CLI output with tests/snapshots/<name>.

Set ``AGENTGUARD_UPDATE_SNAPSHOTS=1`` to (re)write the snapshots after a deliberate change,
then review the diff like code.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from agentguard import __version__

SNAPSHOTS = Path(__file__).resolve().parent / "snapshots"
_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


def normalise(text: str, *paths: tuple[Path | str, str]) -> str:
    for path, label in paths:
        text = text.replace(str(path), label)
    text = _TIME.sub("<time>", text)
    text = text.replace(f"agentguard {__version__} ", "agentguard <version> ")
    for key in ("tool_version", "version", "semanticVersion"):
        text = text.replace(f'"{key}": "{__version__}"', f'"{key}": "<version>"')
    return text


def assert_snapshot(name: str, actual: str) -> None:
    path = SNAPSHOTS / name
    if os.environ.get("AGENTGUARD_UPDATE_SNAPSHOTS") == "1" or not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8")
        if os.environ.get("AGENTGUARD_UPDATE_SNAPSHOTS") != "1":
            raise AssertionError(f"new snapshot written to {path}: review it, then re-run")
        return
    expected = path.read_text(encoding="utf-8")
    assert actual == expected, (
        f"output differs from {path} (AGENTGUARD_UPDATE_SNAPSHOTS=1 rewrites)"
    )
