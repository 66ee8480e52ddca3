"""The text report: one entry per agent configuration; configurations in test and example
code shown a few at a time, then counted (modelled on claude-agent-sdk-python's tests)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from agentguard.cli import app

OPTIONS = "from claude_agent_sdk import ClaudeAgentOptions\n" + "".join(
    f"o{i} = ClaudeAgentOptions()\n" for i in range(8)
)


def test_test_configurations_are_counted_after_five(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_options.py").write_text(OPTIONS)
    result = CliRunner().invoke(app, ["inspect", str(tmp_path)], env={"NO_COLOR": "1"})
    assert result.exit_code == 0, result.stdout  # test code: at most low
    out = result.stdout
    heads = [line for line in out.splitlines() if " agent configuration " in line]
    assert len(heads) == 5
    assert heads[0] == (
        "LOW      agent configuration claude-agent-sdk ClaudeAgentOptions(...) at "
        "tests/test_options.py:2  [test]"
    )
    assert "... and 3 more agent configurations in test code (--verbose shows all)" in out
    verbose = CliRunner().invoke(app, ["inspect", str(tmp_path), "-v"], env={"NO_COLOR": "1"})
    assert sum(" agent configuration " in line for line in verbose.stdout.splitlines()) == 8
