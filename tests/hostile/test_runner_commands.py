"""Workflow commands forged on agentguard's output (#23 item 6).

agentguard runs in CI jobs whose runner reads every line of stdout and stderr for commands:
``::error::``, ``::add-mask::``, ``::stop-commands::`` at the start of a line (after any
spaces), and the legacy ``##[error]`` anywhere in a line. Project data reaches the output
in fix snippets (an AG330 ``uses:`` ref, an AG310 MCP argument), in messages (an MCP
server's name) and in harden's SUMMARY.md. The promise: whatever the project holds, no
line of any output format starts a command or holds ``##[``, and a newline in data is
never a line of its own.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.hostile.local import write
from tests.hostile.promises import run_agentguard

# any newline form a reader may split a line at
NEWLINES = ["\n", "\r", "\r\n", "\u2028", "\x85", "\u2029", "\x0b", "\x0c"]
COMMAND = re.compile(r"^\s*::|##\[")


def forged(text: str) -> list[str]:
    """Every line of ``text`` the runner would take as a command (it splits at \\n, \\r)."""
    return [line for line in re.split(r"\r\n|\r|\n", text) if COMMAND.search(line)]


def run(project: Path, *args: str) -> tuple[int, str, str]:
    result = run_agentguard(
        "inspect", str(project), "--kind", "project", "--no-lock", *args, cwd=project.parent
    )
    result.check_no_crash()
    return result.code, result.stdout, result.stderr


def workflow(ref: str) -> str:
    return (
        "on: issue_comment\njobs:\n  claude:\n    runs-on: ubuntu-latest\n    steps:\n"
        f"      - uses: {json.dumps('anthropics/claude-code-action@' + ref)}\n"
    )


def mcp(args: list[str], name: str = "docs") -> str:
    return json.dumps({"mcpServers": {name: {"command": "npx", "args": ["-y", *args]}}})


@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
def test_a_uses_ref_with_a_newline_forges_no_command(tmp_path: Path, fmt: str) -> None:
    """AG330's snippet quotes the ref (``# {ref}``): the ref's newline stays in its line.
    (One workflow per newline form.)"""
    project = write(
        tmp_path / "p",
        {
            f".github/workflows/claude-{i}.yml": workflow(
                f"main{nl}::error::forged{nl}::add-mask::abc"
            )
            for i, nl in enumerate(NEWLINES)
        },
    )

    code, out, err = run(project, "--format", fmt)

    assert code in (0, 1), out
    assert out.count("AG330") >= len(NEWLINES)
    assert forged(out) == [] and forged(err) == []
    if fmt == "text":
        assert "\\x3a" not in out  # (no line needed breaking: each data newline is escaped)
        lines = [x for x in out.splitlines() if "<40-character commit sha>" in x]
        assert len(lines) == len(NEWLINES), lines
        for line in lines:
            assert line.strip().startswith("uses: anthropics/claude-code-action@")
            assert "::error::forged" in line and "::add-mask::abc" in line


def test_an_mcp_argument_with_a_newline_forges_no_command(tmp_path: Path) -> None:
    """AG310's snippet is the pinned launch line, built from the server's arguments."""
    servers = {
        f"s{i}": {"command": "npx", "args": ["-y", f"@scope/server{nl}::add-mask::abc"]}
        for i, nl in enumerate(NEWLINES)
    }
    project = write(tmp_path / "p", {".mcp.json": json.dumps({"mcpServers": servers})})

    code, out, err = run(project)

    assert code in (0, 1), out
    assert out.count("AG310") >= len(NEWLINES)
    assert forged(out) == [] and forged(err) == []
    shown = [x for x in out.splitlines() if "::add-mask::abc" in x]
    assert shown and all("@scope/server" in x for x in shown), shown


@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
def test_a_legacy_command_inside_a_name_is_broken(tmp_path: Path, fmt: str) -> None:
    """The runner parses ``##[error ...]`` anywhere in a line: no newline is needed."""
    name = "docs ##[error file=x.py,line=1]forged annotation"
    project = write(tmp_path / "p", {".mcp.json": mcp(["@scope/server"], name=name)})

    code, out, err = run(project, "--format", fmt)

    assert code in (0, 1), out
    assert forged(out) == [] and forged(err) == []
    if fmt == "text":
        assert "docs #\\x23[error file=x.py,line=1]forged annotation" in out
    else:  # the same string to a JSON reader
        doc = json.loads(out)
        texts = json.dumps(doc, ensure_ascii=False)
        assert name in texts


@pytest.mark.parametrize("lead", ["", " ", "\t", "   "])
def test_a_command_after_leading_whitespace_is_broken(tmp_path: Path, lead: str) -> None:
    """A file name is shown at the start of a line in the sources table's neighbours and in
    error messages; the runner trims leading spaces before it looks for ``::``."""
    config = tmp_path / f"{lead}::error::forged.toml"
    config.write_text("[tool.agentguard\n")

    result = run_agentguard("check", ".", "--config", config.name, cwd=tmp_path)

    result.check_no_crash()
    assert result.code == 2
    assert forged(result.stderr) == [] and forged(result.stdout) == []
    assert "::error::forged" in result.stderr  # shown, not obeyed


def test_percent_encoded_newlines_stay_text(tmp_path: Path) -> None:
    """``%0A`` is the runner's encoding inside a command's data: data never starts one, so
    it stays the three characters it is."""
    ref = "main%0A::error::forged%0D%0A::add-mask::abc"
    project = write(tmp_path / "p", {".github/workflows/claude.yml": workflow(ref)})

    code, out, err = run(project)

    assert code in (0, 1)
    assert forged(out) == [] and forged(err) == []
    assert "main%0A::error::forged%0D%0A::add-mask::abc" in out
