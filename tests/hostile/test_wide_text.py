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


SHELL = "scripts/nightly.sh"


@pytest.mark.parametrize("encoding", sorted(ENCODINGS))
@pytest.mark.parametrize("path", sorted(set(FILES) - {SHELL}))
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


def _finds_claude_in(path: str, data: bytes, tmp_path: Path) -> None:
    (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / path).write_bytes(data)
    code, doc = _inspect(tmp_path)
    assert [s for s in doc["sources"] if s["status"] == "failed"] == []
    assert code == 1
    assert any(loc["path"] == path for f in doc["findings"] for loc in f["locations"])


@pytest.mark.parametrize("encoding", sorted(ENCODINGS))
def test_a_shell_script_in_utf16_is_read_as_the_shell_reads_it(
    encoding: str, tmp_path: Path
) -> None:
    """dash runs a UTF-16 script with its NUL bytes dropped (the mark is a command that is
    not found, the rest is ASCII): what it runs is read, not failed."""
    _finds_claude_in(SHELL, ENCODINGS[encoding](FILES[SHELL]), tmp_path)


_HEAD = (
    b"#!/bin/bash\n" + b"# a comment line that pads the head past the tests' first bytes...\n" * 8
)


@pytest.mark.parametrize(
    ("path", "data"),
    [
        # bash runs it (no NUL in its first 80 bytes) and drops each NUL: `claude`; the
        # head holds no NUL, so it is no wide text
        (
            SHELL,
            _HEAD + "claude --dangerously-skip-permissions -p hi\n".encode("utf-16-le"),
        ),
        (SHELL, _HEAD + b"c\x00laude --dangerously-skip-permissions -p hi\n"),
        # dash runs it from the first byte
        (SHELL, b"#!/bin/sh\nc\x00laude --dangerously-skip-permissions -p hi\n"),
        (".devcontainer/post-create.sh", b"#!/bin/sh\nc\x00laude --dangerously-skip-permissions\n"),
    ],
    ids=[
        "utf16-body-after-ascii-head",
        "nul-in-the-word-bash",
        "nul-in-the-word-dash",
        "devcontainer",
    ],
)
def test_a_shell_script_with_nul_bytes_is_read_without_them(
    path: str, data: bytes, tmp_path: Path
) -> None:
    """(found by attack: the shell drops NUL bytes, the needles did not, and a few NULs
    are not the quarter of the head that makes wide text: the script "held nothing")"""
    _finds_claude_in(path, data, tmp_path)


def _ts_packet(pid: int, payload: bytes, fill: bytes = b"\xff") -> bytes:
    return bytes([0x47, 0x40 | pid >> 8, pid & 0xFF, 0x10]) + payload.ljust(184, fill)


_PAT = _ts_packet(0, bytes.fromhex("0000b00d0001c100000001f0002ab104b2"))
_NULL_PACKET = _ts_packet(0x1FFF, b"", b"\x00")  # (a DVB capture's zero-filled padding)
BINARY_FILES = {
    "media/capture.ts": (_NULL_PACKET * 3 + _PAT) * 10,  # an MPEG transport stream
    # an AVCHD camcorder clip: each packet after a 4-byte time code
    "media/clip.mts": b"".join(b"\x00\x01\x02\x03" + p for p in [_PAT] + [_NULL_PACKET] * 9),
    "fixtures/table.js": b"".join(n.to_bytes(4, "little") for n in range(256)),  # (int32s)
}


@pytest.mark.parametrize("path", sorted(BINARY_FILES))
def test_a_binary_file_under_a_text_name_is_skipped_not_failed(path: str, tmp_path: Path) -> None:
    """(found by attack: a video named .ts, NUL-heavy, was a failed source, exit 3 on a
    valid project; no reader of its kind reads it as text, so it is skipped, and says so)"""
    (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / path).write_bytes(BINARY_FILES[path])
    code, doc = _inspect(tmp_path)
    assert code == 0
    assert doc["complete"] is True
    (source,) = [s for s in doc["sources"] if s["name"] == path]
    assert source["status"] == "skipped"
    assert source["reason"].startswith("binary")


@pytest.mark.parametrize(
    ("data", "name"),
    [
        ("on: [push]\n".encode("utf-16-le"), "UTF-16LE"),
        ("on: [push]\n".encode("utf-16-be"), "UTF-16BE"),
        ("on: [push]\n".encode("utf-32-le"), "UTF-32LE"),
        ("on: [push]\n".encode("utf-32-be"), "UTF-32BE"),
    ],
    ids=["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"],
)
def test_wide_text_without_a_mark_is_told_from_binary(data: bytes, name: str) -> None:
    assert wide_text(data) == f"{name} without a byte-order mark"


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
