"""A pull request that tries to get the runner's secrets into the report (#16 items 1, 7).

The promise: a link out of the project is never read (so the environment never reaches a
report, whatever the format), a file that does quote secrets has them redacted in text,
JSON and SARIF, and the run says it is incomplete (exit 3) instead of passing.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.hostile.local import (
    CI_ENV,
    GITHUB_TOKEN,
    MINIMAL_PYLOCK,
    PYPROJECT,
    RUNTIME_TOKEN,
    assert_no_secret,
    every_format,
    folder_texts,
    outputs,
    sources,
    write,
)
from tests.hostile.promises import check_failed_source, run_agentguard

pytestmark = pytest.mark.usefixtures("isolated_cache")


@pytest.mark.parametrize("linked", ["requirements.lock", "pylock.toml"])
@pytest.mark.parametrize("command", [("check", "."), ("lock", ".", "--check")])
def test_a_lock_file_linked_to_the_environment_is_never_read(
    tmp_path: Path, linked: str, command: tuple[str, ...]
) -> None:
    project = write(
        tmp_path / "p",
        {"pyproject.toml": PYPROJECT, "pylock.toml": MINIMAL_PYLOCK, "requirements.lock": ""},
    )
    (project / linked).unlink()
    (project / linked).symlink_to("/proc/self/environ")

    runs = every_format(*command, cwd=project)

    assert_no_secret(outputs(runs))
    assert {r.code for r in runs.values()} == {3}
    (lockfile,) = [s for s in sources(runs["json"]) if s["kind"] == "lockfile"]
    check_failed_source(lockfile)
    assert lockfile["reason"] == (
        f"{linked}: cannot read (symbolic link pointing outside the project: not followed)"
    )


def test_an_environment_dump_committed_as_a_file_is_quoted_short_and_redacted(
    tmp_path: Path,
) -> None:
    env_dump = "\0".join(f"{k}={v}" for k, v in CI_ENV.items()) + "\0" + "PAD=" + "x" * 5000
    project = write(
        tmp_path / "p",
        {
            "pyproject.toml": PYPROJECT,
            "pylock.toml": MINIMAL_PYLOCK,
            "requirements.lock": env_dump,
        },
    )

    runs = every_format("lock", ".", "--check", cwd=project)

    # the plain variable may be quoted (it is in a project file); the tokens never are
    assert_no_secret(outputs(runs), (GITHUB_TOKEN, RUNTIME_TOKEN))
    (lockfile,) = [s for s in sources(runs["json"]) if s["kind"] == "lockfile"]
    check_failed_source(lockfile)
    assert lockfile["reason"].startswith(
        "requirements.lock: resolver output has an unreadable line 'GITHUB_TOKEN=REDACTED\\x00"
    )
    assert len(lockfile["reason"]) <= 400


SECRET_VALUES = {
    "hunter2-pw",
    "sk-ant-api03-abcdefghijklmnopqrstuvwx",
    "x-api-key-value-42",
    "glpat-oauthsecret99",
    "querytok123",
}
SECRET_PROJECT = {
    "compose.yaml": (
        "services:\n"
        "  agent:\n"
        "    image: busybox\n"
        '    command: ["run", "--password", "hunter2-pw",'
        ' "--API-Key=sk-ant-api03-abcdefghijklmnopqrstuvwx"]\n'
        "    environment:\n"
        "      X_API_KEY: x-api-key-value-42\n"
    ),
    ".mcp.json": (
        '{"mcpServers": {"gh": {"command": "npx", "args": ["-y", "@x/server", "--token", '
        '"hunter2-pw"], "env": {"API_KEY": "x-api-key-value-42"}}, "remote": {"type": "http", '
        '"url": "https://mcp.example/x?token=querytok123", '
        '"headers": {"X-Api-Key": "x-api-key-value-42"}}}}'
    ),
    "Dockerfile": (
        "FROM python:3.12\n"
        "RUN pip install git+https://oauth2:glpat-oauthsecret99@gitlab.example/a/b.git\n"
        "RUN claude --api-key sk-ant-api03-abcdefghijklmnopqrstuvwx -p hi "
        "--dangerously-skip-permissions\n"
    ),
    "run.sh": '#!/bin/sh\nclaude -p "do" --password=hunter2-pw --dangerously-skip-permissions\n',
}


def test_secrets_in_project_files_never_reach_a_report(tmp_path: Path) -> None:
    project = write(tmp_path / "p", SECRET_PROJECT)

    runs = every_format("inspect", str(project), "--kind", "project", "--no-lock", cwd=tmp_path)

    assert_no_secret(outputs(runs), tuple(SECRET_VALUES))
    assert "REDACTED" in runs["json"].stdout  # the values were there to redact, and were
    assert {r.code for r in runs.values()} == {1}


def test_secrets_in_project_files_never_reach_harden_files(tmp_path: Path) -> None:
    project = write(tmp_path / "p", SECRET_PROJECT)
    out = tmp_path / "hardened"

    run = run_agentguard(
        "harden", str(project), "--kind", "project", "--out", str(out), "--format", "json",
        cwd=tmp_path, env=CI_ENV,
    )  # fmt: skip

    run.check_no_crash()
    assert run.code in (0, 1), run.stderr
    files = folder_texts(out)
    assert "docker-compose.hardened.yml" in files and "docker-run.sh" in files
    assert_no_secret({**files, "stdout": run.stdout, "stderr": run.stderr}, tuple(SECRET_VALUES))


def test_a_secret_in_a_usage_error_is_redacted(tmp_path: Path) -> None:
    project = write(
        tmp_path / "p",
        {"pyproject.toml": '[project]\nname = "x"\nversion = "0"\n'
         f'dependencies = ["pkg @@ https://u:{GITHUB_TOKEN}@h/x"]\n'},
    )  # fmt: skip

    run = run_agentguard("lock", ".", "--check", cwd=project, env=CI_ENV)

    run.check_no_crash()
    assert run.code == 2
    assert run.stderr.startswith("agentguard: error: pyproject.toml:4: invalid requirement")
    assert_no_secret({"stderr": run.stderr, "stdout": run.stdout})


def test_environment_is_not_read_through_a_linked_folder(tmp_path: Path) -> None:
    """A folder link (``conf -> /proc/self``) is not followed by the walk, and a file
    named through one is refused by the safe open."""
    from agentguard import safeio

    project = write(tmp_path / "p", {"agent.py": "x = 1\n"})
    os.symlink("/proc/self", project / "conf")

    with pytest.raises(safeio.LinkOut):
        safeio.read_bytes(project / "conf" / "environ", root=project)
    runs = every_format("inspect", str(project), "--kind", "project", "--no-lock", cwd=tmp_path)
    assert_no_secret(outputs(runs))
