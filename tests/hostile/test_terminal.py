"""Output that lies to a terminal (#16 item 12): file names and values holding ESC, OSC 52
(clipboard write), OSC 0 (title), CR/LF and rich markup.

The promise: no control character reaches the text report raw (each is shown as an
escape), no line can be forged, markup in data prints as written, and a non-UTF-8 file
name never crashes any format.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from tests.hostile.local import write
from tests.hostile.promises import run_agentguard

AGENT = (
    "from claude_agent_sdk import ClaudeAgentOptions\n"
    'opts = ClaudeAgentOptions(permission_mode="bypassPermissions")\n'
)
FORGED = "0 findings (every source was read)"
HOSTILE_NAME = f"a\x1b]52;c;ZXZpbA==\x07\x1b]0;owned\x07\r\n{FORGED}\n\x9b31m.py"
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def text_report(project: Path, *extra: str) -> tuple[int, str]:
    run = run_agentguard(
        "inspect", str(project), "--kind", "project", "--no-lock", *extra, cwd=project.parent
    )
    run.check_no_crash()
    return run.code, run.stdout


def test_control_characters_in_a_file_name_are_shown_not_sent(tmp_path: Path) -> None:
    project = write(tmp_path / "p", {HOSTILE_NAME: AGENT})

    code, out = text_report(project)

    assert code == 1
    assert not RAW_CONTROL.search(out), repr(RAW_CONTROL.search(out))
    assert FORGED not in out.splitlines()  # no line of its own
    assert "\\x1b]52;c;ZXZpbA==\\x07" in out and "\\r\\n0 findings" in out


@pytest.mark.parametrize("folder", ["[/x]", "[slug]", "[bold red]hi[/]"])
def test_markup_in_a_path_prints_as_written(tmp_path: Path, folder: str) -> None:
    project = write(tmp_path / "p", {f"app/{folder}/agent.py": AGENT})

    code, out = text_report(project, "--verbose")  # the sources table names every file

    assert code == 1, out
    shown = [line for line in out.splitlines() if "agent.py" in line]
    assert any(line.startswith("│ ok ") for line in shown), out  # the sources table row
    assert all(f"app/{folder}/agent.py" in line for line in shown), shown


def test_markup_and_controls_in_a_failed_source_reason(tmp_path: Path) -> None:
    """A reason quoting a config value goes through the sources table too."""
    project = write(tmp_path / "p", {"[/x]\x1b[2J.mcp.json": "{", ".mcp.json": '{"a": [/x]\x1b[2J'})

    code, out = text_report(project, "--verbose")

    assert code == 3
    assert not RAW_CONTROL.search(out)
    assert ".mcp.json" in out and "INCOMPLETE" in out


@pytest.mark.parametrize("fmt", ["json", "sarif", "text"])
def test_a_non_utf8_file_name_never_crashes_a_format(tmp_path: Path, fmt: str) -> None:
    project = write(tmp_path / "p", {})
    os.makedirs(project, exist_ok=True)
    with open(os.path.join(os.fsencode(project), b"agent-\xff.py"), "wb") as fh:
        fh.write(AGENT.encode())

    code, out = text_report(project, "--format", fmt)

    assert code == 1
    if fmt == "text":
        assert "agent-\\xff.py" in out
    else:  # the byte shown as an escape: JSON text holds its backslash escaped
        assert "agent-\\\\xff.py" in out and json.loads(out)


def test_an_error_message_never_starts_a_line_of_its_own(tmp_path: Path) -> None:
    """A CI runner reads `::error::`-style commands from any line of the log."""
    config = tmp_path / "x\n::error::forged\x1b[2J.toml"
    config.write_text("[tool.agentguard\n")

    run = run_agentguard("check", ".", "--config", str(config), cwd=tmp_path)

    run.check_no_crash()
    assert run.code == 2
    assert len(run.stderr.splitlines()) == 1, run.stderr
    assert "x\\n::error::forged\\x1b[2J.toml" in run.stderr
