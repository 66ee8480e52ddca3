"""``npx -y @anthropic-ai/claude-code --flags`` is a claude command line: the needle in
front of the command-line reader lets it through (found attacking `lock`'s shortcut for a
folder of build files, which tests the same needle)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentguard.inspect.project import servers as servers_module
from agentguard.inspect.project.scan import collect_folder
from agentguard.inspect.project.walk import walk


def _write(root: Path, files: dict[str, bytes]) -> Path:
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


NPX_CLAUDE = (
    b"FROM node:22\n"
    b'CMD npx -y @anthropic-ai/claude-code --dangerously-skip-permissions -p "fix the build"\n'
)


@pytest.mark.parametrize("name", ["Dockerfile", "run.sh", ".devcontainer/post-create.sh"])
def test_claude_run_by_its_package_name_is_read(tmp_path: Path, name: str) -> None:
    """``npx -y @anthropic-ai/claude-code --flags`` is a claude command line the reader
    reads (``cli_flags._CLAUDE_PACKAGES``); the needle in front of it let it through only
    where a bare ``claude`` stood too, so a Dockerfile that ran Claude Code this way with
    its permission checks off was read as running no agent (and `lock`'s shortcut took
    such a folder of build files for one that launches nothing)."""
    root = _write(tmp_path / "p", {name: NPX_CLAUDE})
    col = collect_folder(root)
    options = [dict(c.options) for o in col.outcomes for c in o.configs]
    assert [o["permission_mode"].value for o in options] == ["bypassPermissions"]
    assert servers_module._launches_none(root, walk(str(root))) is None
