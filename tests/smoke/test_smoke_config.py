"""`smoke = true` is honoured only from a file given with --config (the CI's), never from
the scanned project's own configuration (the pull request's)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentguard.config import ConfigError, load_config
from agentguard.smoke.step import UNTRUSTED_NOTE, wanted


def _project(tmp: Path, table: str) -> Path:
    root = tmp / "p"
    root.mkdir(parents=True)
    (root / "pyproject.toml").write_text(
        f'[project]\nname = "p"\nversion = "1"\n\n[tool.agentguard]\n{table}\n'
    )
    return root


def test_the_projects_own_smoke_key_is_not_honoured(tmp_path: Path) -> None:
    config = load_config(_project(tmp_path, "smoke = true"))
    assert (config.smoke, config.smoke_trusted) == (True, False)
    assert wanted(None, config) == (False, UNTRUSTED_NOTE)
    assert wanted(True, config) == (True, None)  # the command line decides


def test_a_config_file_given_on_the_command_line_turns_it_on(tmp_path: Path) -> None:
    ci = tmp_path / "ci.toml"
    ci.write_text("smoke = true\n")
    config = load_config(_project(tmp_path, ""), config_file=ci)
    assert wanted(None, config) == (True, None)
    assert wanted(False, config) == (False, None)


def test_off_by_default_and_typed(tmp_path: Path) -> None:
    assert wanted(None, load_config(_project(tmp_path, ""))) == (False, None)
    with pytest.raises(ConfigError, match="smoke must be true or false"):
        load_config(_project(tmp_path / "x", 'smoke = "yes"'))


def test_lock_notes_the_refused_key_and_runs_no_smoke(tmp_path: Path) -> None:
    from agentguard.lock_command import LockOptions, run_lock

    root = _project(tmp_path, "smoke = true")
    report, _ = run_lock(LockOptions(project=root, check=True))
    assert UNTRUSTED_NOTE in report.notes
    assert "smoke" not in report.facts
