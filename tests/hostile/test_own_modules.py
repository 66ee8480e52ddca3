"""A Python module agentguard runs as a child (pip-compile, for `--backend pip-tools`) is the
installed one, never a folder of that name in the checkout agentguard was started in:
`python -m NAME` looks in the folder it starts in first."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from agentguard.lock.children import own_module
from tests.lock.helpers import run_json, write_project

_PLANTED = """\
import pathlib, sys
pathlib.Path({marker!r}).write_text("ran")
print("pip-compile, version 99.0")
sys.exit(0)
"""


def _plant(folder: Path, name: str, marker: Path) -> None:
    package = folder / name
    package.mkdir()
    (package / "__init__.py").write_text(_PLANTED.format(marker=str(marker)))
    (package / "__main__.py").write_text(_PLANTED.format(marker=str(marker)))


def test_a_module_of_the_folder_is_not_the_one_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    _plant(tmp_path, "calendar", marker)
    real = subprocess.run(
        own_module(sys.executable, "calendar", "2026", "1"),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert "January 2026" in real.stdout and not marker.exists()
    # (what `-m` does there: the test above would see it)
    subprocess.run(
        [sys.executable, "-m", "calendar", "2026", "1"], cwd=tmp_path, timeout=60, check=True
    )
    assert marker.read_text() == "ran"


def test_a_module_gets_its_arguments_as_with_dash_m(tmp_path: Path) -> None:
    script = tmp_path / "site" / "echo_args"
    script.mkdir(parents=True)
    (script / "__main__.py").write_text("import sys; print(sys.argv)")
    got = subprocess.run(
        own_module(sys.executable, "echo_args", "a b", "--c"),
        cwd=tmp_path,
        env={"PYTHONPATH": str(tmp_path / "site")},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    argv = eval(got.stdout)  # (our own child's print of a list of str)
    assert argv[0].endswith("__main__.py") and argv[1:] == ["a b", "--c"]


def test_pip_tools_started_in_a_checkout_with_a_piptools_folder(
    tmp_path: Path, agent_index: dict[str, Any]
) -> None:
    """`agentguard lock --backend pip-tools` run from the checkout (as CI runs it): the
    checkout's `piptools/` never runs, and the lock is pip-compile's."""
    marker = tmp_path / "ran"
    project = write_project(tmp_path / "bot", ["claude-agent-sdk==0.2.95"])
    _plant(project, "piptools", marker)
    command = Path(sys.executable).parent / "agentguard"  # (the command CI runs)
    argv = [str(command), "lock", ".", "--backend", "pip-tools", "--format", "json"]
    ran = subprocess.run(
        [*argv, "--index-url", agent_index["url"]],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert not marker.exists(), ran.stderr
    report = json.loads(ran.stdout)
    assert ran.returncode == 1 and report["complete"] is True, report["sources"]
    backend = report["provenance"]["inputs"]["backend"]
    assert backend.startswith("pip-compile") and "99.0" not in backend
    assert "mcp==2.1.0" in (project / "requirements.lock").read_text()


def test_python_dash_m_agentguard_imports_nothing_more_from_the_folder(
    tmp_path: Path, agent_index: dict[str, Any]
) -> None:
    """`python -m agentguard` started in the checkout (what the tests' own runner does):
    the modules agentguard imports once it runs (here `piptools`, imported to check the
    backend is there) come from the environment, not the folder."""
    marker = tmp_path / "ran"
    project = write_project(tmp_path / "bot", ["claude-agent-sdk==0.2.95"])
    _plant(project, "piptools", marker)
    code, report, stderr = run_json(
        "lock", ".", "--backend", "pip-tools", "--index-url", agent_index["url"], cwd=project
    )
    assert not marker.exists(), stderr
    assert code == 1 and report["complete"] is True, report["sources"]
    backend = report["provenance"]["inputs"]["backend"]
    assert backend.startswith("pip-compile") and "99.0" not in backend
