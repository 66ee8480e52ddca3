"""A file in UTF-16 or UTF-32 is never a file that "holds nothing".

The project scan finds what to parse with byte needles (``claude``, an SDK's import, a
workflow's ``run:``); in UTF-16 every ASCII letter is followed by a NUL byte, so a
workflow that runs ``claude --dangerously-skip-permissions`` on ``pull_request_target``,
written in UTF-16 (YAML allows it), was read as running no agent, and the report said
nothing of it. Each such file is now a failed source that says why (found by attacking
``lock``'s build-file shortcut: a UTF-16 file was "read, nothing in it").
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentguard.cli import app
from agentguard.inspect.project.files import process_file
from agentguard.inspect.project.needles import wide_text

FILES = {
    ".github/workflows/triage.yml": (
        "on: [pull_request_target]\njobs:\n  triage:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - run: claude --dangerously-skip-permissions -p triage\n"
    ),
    "agent.py": (
        "from claude_agent_sdk import ClaudeAgentOptions\n\n"
        "OPTIONS = ClaudeAgentOptions(permission_mode='bypassPermissions')\n"
    ),
    "scripts/nightly.sh": "#!/bin/sh\nclaude --dangerously-skip-permissions -p 'fix the build'\n",
    "bot.ts": (
        'import { query } from "@anthropic-ai/claude-agent-sdk";\n'
        'query({ prompt: "hi", options: { permissionMode: "bypassPermissions" } });\n'
    ),
}
ENCODINGS = {
    "utf-16": lambda t: t.encode("utf-16"),  # (with its byte-order mark)
    "utf-16-be-bom": lambda t: b"\xfe\xff" + t.encode("utf-16-be"),
    "utf-16-le-no-bom": lambda t: t.encode("utf-16-le"),
    "utf-32": lambda t: t.encode("utf-32"),
}


def _inspect(root: Path) -> tuple[int, dict[str, Any]]:
    result = CliRunner().invoke(
        app, ["inspect", str(root), "--format", "json", "--no-cache", "--no-project-config"]
    )
    return result.exit_code, json.loads(result.stdout)


@pytest.mark.parametrize("path", sorted(FILES))
def test_the_file_in_utf8_is_read(path: str, tmp_path: Path) -> None:
    """(the control: each file says something in UTF-8)"""
    (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / path).write_text(FILES[path])
    code, doc = _inspect(tmp_path)
    assert code == 1
    assert any(loc["path"] == path for f in doc["findings"] for loc in f["locations"])


@pytest.mark.parametrize("encoding", sorted(ENCODINGS))
@pytest.mark.parametrize("path", sorted(FILES))
def test_a_file_the_needles_cannot_read_is_a_failed_source(
    path: str, encoding: str, tmp_path: Path
) -> None:
    (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / path).write_bytes(ENCODINGS[encoding](FILES[path]))
    code, doc = _inspect(tmp_path)
    assert code == 3
    failed = [s for s in doc["sources"] if s["status"] == "failed"]
    assert [(s["name"], s["error_code"]) for s in failed] == [(path, "not-utf8")]
    assert failed[0]["reason"].startswith("not UTF-8 text (UTF-")
    assert doc["complete"] is False


def test_a_file_from_an_image_is_failed_too() -> None:
    """The same test where files come without a walk (an image's, a base revision's)."""
    out = process_file("app/agent.py", "python", FILES["agent.py"].encode("utf-16"))
    assert [(s.name, s.error_code) for s in out.sources] == [("app/agent.py", "not-utf8")]
    assert out.configs == [] and out.read is False


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"plain ascii\n",
        "caf\u00e9 \u2014 \u4e2d\u6587\n".encode(),
        b'const s = "a\x00b";\n' + b"x = 1;\n" * 40,  # (a stray NUL in UTF-8 text)
        "\ufeffwith a UTF-8 mark\n".encode(),
    ],
)
def test_utf8_text_is_not_taken_for_wide_text(data: bytes) -> None:
    assert wide_text(data) is None
