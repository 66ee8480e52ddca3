"""Project templates (crewAI's `class {{crew_name}}():`, a cookiecutter pyproject) are
templates, not broken files: read best-effort or skipped with the reason, never a failed
source, and `check` never ends 3 for them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentguard.cli import app
from tests.inspect.project.support import FIXTURES, scan

CASE = FIXTURES / "templates/project-templates"
PYPROJECT = "templates/new-package/{{cookiecutter.package_name}}/pyproject.toml"


def test_templates_are_read_best_effort_or_skipped_never_failed() -> None:
    _, sources = scan(CASE)
    got = {s.name: (s.status.value, s.reason) for s in sources if s.kind == "file"}
    # (crew.py never switches code execution on: it is read for the agents it defines,
    # which the map draws, as coder.py is for its grant)
    best_effort = (
        "ok",
        "Python template read best-effort before rendering: each {{ value }} read as an "
        "unknown name, {% %} tags dropped",
    )
    assert got == {
        "templates/crew/coder.py": best_effort,
        "templates/crew/crew.py": best_effort,
        # (the template's class names a config/agents.yaml the template does not hold)
        "templates/crew/config/agents.yaml": (
            "skipped",
            "crewAI class __template_crew_name__Coder (templates/crew/coder.py:8) names it: "
            "not found, not a regular file, or over the size cap; its agents are not drawn",
        ),
        PYPROJECT: (
            "skipped",
            "a template ({% %} / {{ }} markers) that does not parse as TOML before rendering: "
            "not read; render it and inspect the result, or list it in `exclude`",
        ),
    }


def test_check_of_a_project_with_templates_reports_and_does_not_end_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(CASE, tmp_path / "p")
    monkeypatch.chdir(tmp_path / "p")
    result = CliRunner().invoke(app, ["check", ".", "--format", "json"])
    assert result.exit_code in (0, 1), result.stdout + result.stderr
    assert '"schema"' in result.stdout
