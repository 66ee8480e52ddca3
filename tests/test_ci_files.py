"""The CI integration files run what they say: the action's scripts, the pre-commit hooks and
the GitLab snippet in docs/ci.md, each executed for real against the fixture project."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent
FIXTURE = REPO / "tests" / "fixtures" / "check" / "agent-project"
BIN = Path(sys.executable).parent  # the environment's `agentguard` script lives here


@pytest.fixture()
def agent_project(tmp_path: Path) -> Path:
    dest = tmp_path / "agent-project"
    shutil.copytree(FIXTURE, dest)
    return dest


def env(**extra: str) -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if not k.startswith("INPUT_")}
    out["PATH"] = f"{BIN}{os.pathsep}{out.get('PATH', '')}"
    out.update(extra)
    return out


def action_step(name: str) -> dict[str, Any]:
    action = yaml.safe_load((REPO / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    (step,) = [s for s in action["runs"]["steps"] if s.get("name") == name]
    return dict(step)


def run_check_step(cwd: Path | None, **inputs: str) -> subprocess.CompletedProcess[str]:
    """The action's "agentguard check" step, as the runner runs it."""
    defaults = {
        "INPUT_IMAGES": "\n   \n",
        "INPUT_FROM_COMPOSE": "false",
        "INPUT_FAIL_ON": "high",
        "INPUT_BASELINE": "",
        "INPUT_ALLOW_INCOMPLETE": "false",
        "NO_COLOR": "1",
    }
    return subprocess.run(
        ["bash", "-e", "-c", action_step("agentguard check")["run"]],
        cwd=cwd,
        env=env(**{**defaults, **inputs}),
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_action_inputs_and_upload() -> None:
    action = yaml.safe_load((REPO / "action.yml").read_text())
    assert set(action["inputs"]) >= {"path", "images", "fail-on", "sarif-file", "baseline"}
    uses = [s.get("uses", "") for s in action["runs"]["steps"]]
    assert any(u.startswith("github/codeql-action/upload-sarif@") for u in uses)
    assert "pip install" in action_step("Install agentguard")["run"]


def test_action_check_script_writes_sarif_and_the_exit_code(
    agent_project: Path, tmp_path: Path, sarif_schema: dict[str, Any]
) -> None:
    output = tmp_path / "github-output"
    sarif = tmp_path / "agentguard.sarif"
    result = run_check_step(
        None, GITHUB_OUTPUT=str(output), INPUT_PATH=str(agent_project), INPUT_SARIF=str(sarif)
    )
    assert result.returncode == 0, result.stderr  # the step itself never fails the job
    assert output.read_text() == f"exit-code=1\nsarif-file={sarif}\n"
    assert "AG103 Lock files out of sync with the inputs" in result.stdout
    doc = json.loads(sarif.read_text())
    jsonschema.validate(doc, sarif_schema)


def test_action_writes_sarif_outside_the_checkout_by_default(
    agent_project: Path, tmp_path: Path
) -> None:
    """A pull request can plant `agentguard.sarif -> ~/.bashrc` in the checkout: by default
    the report goes to the runner's temporary folder instead, and is uploaded from there."""
    output, runner_temp = tmp_path / "github-output", tmp_path / "runner-temp"
    runner_temp.mkdir()
    victim = tmp_path / "victim"
    victim.write_text("keep\n")
    (agent_project / "agentguard.sarif").symlink_to(victim)
    result = run_check_step(
        agent_project,
        GITHUB_OUTPUT=str(output),
        RUNNER_TEMP=str(runner_temp),
        INPUT_PATH=".",
        INPUT_SARIF="",
    )
    assert result.returncode == 0, result.stderr
    (written,) = runner_temp.iterdir()
    assert output.read_text() == f"exit-code=1\nsarif-file={written}\n"
    assert json.loads(written.read_text())["version"] == "2.1.0"
    assert victim.read_text() == "keep\n"


@pytest.mark.parametrize(("code", "exit_code"), [("0", 0), ("1", 1), ("2", 2), ("3", 3)])
def test_action_gate_fails_the_job_with_checks_exit_code(code: str, exit_code: int) -> None:
    step = action_step("Gate")
    result = subprocess.run(
        ["bash", "-e", "-c", step["run"]], env=env(CODE=code), capture_output=True, text=True
    )
    assert result.returncode == exit_code


def test_pre_commit_hooks_run_for_real(agent_project: Path) -> None:
    hooks = {h["id"]: h for h in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}
    assert set(hooks) == {"agentguard-lock-check", "agentguard-project"}
    for hook in hooks.values():
        assert hook["language"] == "python" and hook["pass_filenames"] is False
    assert re.search(hooks["agentguard-lock-check"]["files"], "sub/requirements.lock")

    lock = subprocess.run(
        hooks["agentguard-lock-check"]["entry"].split(),
        cwd=agent_project,
        env=env(NO_COLOR="1"),
        capture_output=True,
        text=True,
    )
    assert lock.returncode == 1  # no lock files in the fixture: AG103
    assert "AG103" in lock.stdout

    project = subprocess.run(
        hooks["agentguard-project"]["entry"].split(),
        cwd=agent_project,
        env=env(NO_COLOR="1"),
        capture_output=True,
        text=True,
    )
    assert project.returncode in (0, 1), project.stderr  # a verdict, not a usage error
    assert project.stdout.startswith("agentguard ")


def test_gitlab_snippet_in_the_docs_runs(agent_project: Path) -> None:
    text = (REPO / "docs" / "ci.md").read_text()
    block = text.split("## GitLab CI", 1)[1].split("```yaml", 1)[1].split("```", 1)[0]
    job = yaml.safe_load(block)["agentguard"]
    (command,) = [c for c in job["script"] if c.startswith("agentguard ")]
    result = subprocess.run(
        command.split(), cwd=agent_project, env=env(), capture_output=True, text=True
    )
    assert result.returncode == 1
    for artifact in job["artifacts"]["paths"]:
        assert (agent_project / artifact).is_file(), artifact


# -- the action runs none of the checkout's code, and nothing it prints is a command ------


def _action() -> dict[str, Any]:
    return dict(yaml.safe_load((REPO / "action.yml").read_text()))


def test_action_pins_every_third_party_action_by_commit_with_its_tag() -> None:
    text = (REPO / "action.yml").read_text()
    uses = [
        line.strip() for line in text.splitlines() if line.strip().startswith(("uses:", "- uses:"))
    ]
    assert len(uses) == 2
    for line in uses:
        assert re.fullmatch(r"(- )?uses: [\w.-]+/[\w./-]+@[0-9a-f]{40} # v\d+(\.\d+)*", line), line
    steps = [s["uses"] for s in _action()["runs"]["steps"] if "uses" in s]
    assert [s.split("@")[0] for s in steps] == [
        "actions/setup-python",
        "github/codeql-action/upload-sarif",
    ]


def test_action_installs_its_own_version_by_default() -> None:
    import tomllib

    from agentguard import __version__

    dist = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["name"]
    assert _action()["inputs"]["package"]["default"] == f"{dist}=={__version__}"


def test_action_pip_imports_nothing_from_the_checkout(tmp_path: Path) -> None:
    """A pull request's `pip/__main__.py` runs with `python -m pip` started in the checkout;
    the install step runs isolated (`-I`) from the runner's temporary folder."""
    step = action_step("Install agentguard")
    assert step["working-directory"] == "${{ runner.temp }}"
    assert "python -I -m pip install" in step["run"]
    checkout = tmp_path / "checkout"
    (checkout / "pip").mkdir(parents=True)
    ran = tmp_path / "ran"
    (checkout / "pip" / "__init__.py").write_text("")
    (checkout / "pip" / "__main__.py").write_text(f"open({str(ran)!r}, 'w').write('x')\n")
    # even started in the checkout (the worst case), no file of it is imported
    result = subprocess.run(
        ["bash", "-e", "-c", step["run"]],
        cwd=checkout,
        env=env(PACKAGE="--help", PYTHONPATH=str(checkout)),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "pip install [options]" in result.stdout
    assert not ran.exists()


def _fake_agentguard(tmp_path: Path, says: str) -> tuple[Path, Path]:
    bin_dir = tmp_path / "fake-bin"
    bin_dir.mkdir()
    argv = tmp_path / "argv"
    fake = bin_dir / "agentguard"
    fake.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {argv}\nprintf "%s\\n" "{says}"\nexit 1\n')
    fake.chmod(0o755)
    return bin_dir, argv


def _run_with(bin_dir: Path, tmp_path: Path, **inputs: str) -> subprocess.CompletedProcess[str]:
    defaults = {
        "INPUT_PATH": ".",
        "INPUT_IMAGES": "",
        "INPUT_FROM_COMPOSE": "false",
        "INPUT_FAIL_ON": "",
        "INPUT_BASELINE": "",
        "INPUT_ALLOW_INCOMPLETE": "false",
        "INPUT_SARIF": str(tmp_path / "out.sarif"),
        "GITHUB_OUTPUT": str(tmp_path / "github-output"),
    }
    e = env(**{**defaults, **inputs})
    e["PATH"] = f"{bin_dir}{os.pathsep}{e['PATH']}"
    return subprocess.run(
        ["bash", "-e", "-c", action_step("agentguard check")["run"]],
        cwd=tmp_path,
        env=e,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_action_output_is_wrapped_in_stop_commands_with_a_fresh_token(tmp_path: Path) -> None:
    forged = "::add-mask::x\n::error title=forged::from project data"
    bin_dir, _argv = _fake_agentguard(tmp_path, forged)
    runs = [_run_with(bin_dir, tmp_path) for _ in range(2)]
    tokens = []
    for result in runs:
        assert result.returncode == 0, result.stderr
        lines = result.stdout.splitlines()
        start = re.fullmatch(r"::stop-commands::(agentguard-[0-9a-f]{32})", lines[0])
        assert start is not None, lines
        token = start.group(1)
        assert lines[1:] == [
            "::add-mask::x",
            "::error title=forged::from project data",
            f"::{token}::",
        ]
        tokens.append(token)
    assert tokens[0] != tokens[1]


@pytest.mark.parametrize(
    ("inputs", "flags"),
    [
        ({}, []),
        ({"INPUT_CONFIG": "/ci/agentguard.toml"}, ["--config", "/ci/agentguard.toml"]),
        ({"INPUT_PROJECT_CONFIG": "false"}, ["--no-project-config"]),
        ({"INPUT_INLINE_IGNORES": "false"}, ["--no-inline-ignores"]),
        ({"INPUT_PROJECT_CONFIG": "true", "INPUT_INLINE_IGNORES": "true"}, []),
    ],
)
def test_action_config_inputs_map_to_check_flags(
    tmp_path: Path, inputs: dict[str, str], flags: list[str]
) -> None:
    action = _action()
    assert {
        k: action["inputs"][k]["default"] for k in ("config", "project-config", "inline-ignores")
    } == {
        "config": "",
        "project-config": "true",
        "inline-ignores": "true",
    }
    bin_dir, argv = _fake_agentguard(tmp_path, "ok")
    result = _run_with(bin_dir, tmp_path, **inputs)
    assert result.returncode == 0, result.stderr
    sarif = str(tmp_path / "out.sarif")
    assert argv.read_text().splitlines() == ["check", ".", "--sarif-output", sarif, *flags]
