"""SUMMARY.md is Markdown a reviewer reads rendered (#23 item 6): a tool's name holding raw
newlines, HTML, a link or a mention stays text there, on one line."""

from __future__ import annotations

import re
from pathlib import Path

from tests.harden.support import harden_folder

TOOL = (
    "Read\n# Forged heading\n<img src=x onerror=alert(1)>\n"
    "[click](https://evil.example) @octocat ``` | x"
)
AGENT = (
    "from claude_agent_sdk import ClaudeAgentOptions\n"
    "opts = ClaudeAgentOptions(\n"
    '    permission_mode="bypassPermissions",\n'
    f'    allowed_tools=["Bash", {TOOL!r}],\n'
    ")\n"
)


def test_a_tool_name_with_newlines_and_markup_stays_text(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    (project / "agent.py").write_text(AGENT)
    out = tmp_path / "out"

    harden_folder(project, out)

    summary = (out / "SUMMARY.md").read_text()
    lines = summary.splitlines()
    assert not any(x.startswith(("# Forged", "<img", "[click")) for x in lines), summary
    shown = [x for x in lines if "Forged heading" in x]
    assert shown, summary
    for line in shown:  # each mention is one line, and every metacharacter in it escaped
        outside = re.sub(r"\\.", "", re.sub(r"(?<!`)(`+)(?!`).+?(?<!`)\1(?!`)", "", line))
        for meta in ("<", "[click", "@octocat", "|"):
            assert meta not in outside, line
    assert "\\<img src=x onerror=alert(1)\\>" in summary
    assert "\\[click\\](https://evil.example) \\@octocat" in summary
