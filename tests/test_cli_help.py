"""Every command's --help renders (rich markup in help texts once crashed `inspect --help`)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from agentguard.cli import app


@pytest.mark.parametrize("command", ["lock", "inspect", "check", "harden", "rules", "explain"])
def test_help_renders(command: str) -> None:
    result = CliRunner().invoke(app, [command, "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage" in result.output
