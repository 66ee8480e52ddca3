"""The agent's code travels, the project does not (no engine): which entries a start
command needs, the hardened Dockerfile (FROM the image, or the original with its
`COPY . DIR` narrowed), `--code-mount`, and secrets by name in every writer."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentguard.harden.code import Start, dockerfile_start, named_entries
from agentguard.harden.run_script import BuildArgs, RunParseError, parse_build_line
from tests.harden.support import harden_folder, written_text


def _body(text: str) -> str:
    """A written file without its comment header."""
    return "".join(line + "\n" for line in text.splitlines() if not line.startswith("#"))


def test_the_start_of_the_last_stage_is_read_with_its_whole_context_copy() -> None:
    text = (
        'FROM builder AS b\nWORKDIR /src\nCOPY . .\nCMD ["make"]\n'
        "FROM base\nWORKDIR /app\n# the project\nCOPY --chown=0:0 \\\n  . /app\n"
        'ENTRYPOINT ["node"]\nCMD ["src/index.js"]\n'
    )
    assert dockerfile_start(text) == Start(
        entrypoint=["node"],
        cmd=["src/index.js"],
        workdir="/app",
        copy_all="/app",
        copy_lines=(8, 9),
    )
    shell = dockerfile_start("FROM x\nCMD python -m bot\n")
    assert shell.cmd == ["/bin/sh", "-c", "python -m bot"]
    assert shell.copy_all is None


def test_only_what_the_command_names_travels(tmp_path: Path) -> None:
    (tmp_path / "bot").mkdir()
    (tmp_path / "src").mkdir()
    (tmp_path / "node_modules").mkdir()
    (tmp_path / "package.json").write_text("{}")
    (tmp_path / "agent.sh").write_text("echo\n")
    (tmp_path / ".env").write_text("KEY=1\n")
    os.symlink("/etc/passwd", tmp_path / "linked.sh")

    assert named_entries(tmp_path, ["python", "-m", "bot.main"], "/app") == (["bot"], True, [])
    assert named_entries(tmp_path, ["sh", "agent.sh"], "/app") == (["agent.sh"], False, [])
    assert named_entries(tmp_path, ["node", "src/index.js"], "/app") == (
        ["src", "package.json", "node_modules"],
        False,
        ["src/index.js is not a file of the project: what it loads is not known"],
    )
    assert named_entries(tmp_path, ["sh", "/app/agent.sh"], "/app")[0] == ["agent.sh"]
    # a link is never carried (it could point anywhere on the host), nor the secrets file
    assert named_entries(tmp_path, ["sh", "linked.sh", "./.env"], "/app") == (
        [],
        False,
        [
            "linked.sh (named by the command) is not a plain file or folder of the project",
            ".env is never carried into the hardened image",
        ],
    )


def _issue_project(root: Path) -> Path:
    root.mkdir()
    (root / "agent.sh").write_text("echo up\n")
    (root / "docs").mkdir()
    (root / "docs" / "plan.md").write_text("internal\n")
    (root / "compose.yml").write_text(
        "services:\n  agent:\n    image: agent:1\n    working_dir: /app\n"
        "    command: sh agent.sh\n    volumes:\n      - .:/app\n"
        "    environment:\n      AGENT_API_KEY: ${AGENT_API_KEY}\n      MODE: prod\n"
    )
    return root


def test_the_issue_compose_project_gets_an_image_with_only_its_script(tmp_path: Path) -> None:
    _issue_project(tmp_path / "proj")
    out = tmp_path / "out"
    result = harden_folder(tmp_path / "proj", out)
    assert _body((out / "Dockerfile.hardened").read_text()) == (
        'FROM agent:1\nCOPY ["agent.sh", "/app/agent.sh"]\nWORKDIR /work\nUSER 10001:10001\n'
    )
    script = (out / "docker-run.sh").read_text()
    assert (
        'cd "$(dirname "$0")"\n'
        "docker build --quiet --tag agent:1-hardened --file Dockerfile.hardened ../proj >/dev/null\n"
    ) in script
    assert script.endswith("  agent:1-hardened \\\n  sh \\\n  /app/agent.sh\n")
    assert "--env AGENT_API_KEY \\\n  --env MODE=prod \\\n" in script
    assert parse_build_line(script) == BuildArgs(
        "agent:1-hardened", "Dockerfile.hardened", "../proj", {}
    )
    compose = (out / "docker-compose.hardened.yml").read_text()
    assert (
        "    image: agent:1-hardened\n    build:\n      context: ../proj\n"
        "      dockerfile: ../out/Dockerfile.hardened\n    command:\n    - sh\n    - /app/agent.sh\n"
    ) in compose
    assert "    environment:\n      HOME: /tmp\n      AGENT_API_KEY:\n      MODE: prod\n" in compose
    kube = (out / "kubernetes.yaml").read_text()
    assert "image: agent:1-hardened" in kube
    assert (
        "    - name: AGENT_API_KEY\n      valueFrom:\n        secretKeyRef:\n"
        "          name: agent-secrets\n          key: AGENT_API_KEY\n"
    ) in kube
    assert "${AGENT_API_KEY}" not in written_text(out)
    [svc] = result.plan.spec.services
    assert svc.notes == (
        "dropped the bind mount . -> /app (a host folder or an anonymous mount; if the agent "
        "needs it, pass --allow-mount HOST:PATH with a PATH outside /work (mounted read-only))",
        "the agent's code came from the project (bind mount .:/app); only agent.sh travels, "
        "read-only at /app, outside the working directory /work",
        "relative paths rewritten: agent.sh -> /app/agent.sh",
        "the project has no lock (requirements.lock, uv.lock or poetry.lock): the dependencies "
        "are the original image's; run `agentguard lock` and harden again to install them from "
        "the lock",
    )


def test_code_mount_mounts_only_the_code_read_only(tmp_path: Path) -> None:
    proj = _issue_project(tmp_path / "proj")
    out = tmp_path / "out"
    harden_folder(proj, out, code_mount=True)
    script = (out / "docker-run.sh").read_text()
    assert "docker build" not in script
    assert (
        f"--mount type=bind,source={proj.resolve()}/agent.sh,target=/app/agent.sh,readonly"
    ) in script
    assert script.endswith("  agent:1 \\\n  sh \\\n  /app/agent.sh\n")
    compose = (out / "docker-compose.hardened.yml").read_text()
    assert (
        f"    - type: bind\n      source: {proj.resolve()}/agent.sh\n      target: /app/agent.sh\n"
        "      read_only: true\n"
    ) in compose


def test_a_whole_context_copy_is_narrowed_to_the_package(tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    (proj / "bot").mkdir(parents=True)
    (proj / "bot" / "__main__.py").write_text("print('up')\n")
    (proj / "docs").mkdir()
    (proj / "Dockerfile").write_text(
        "FROM python:3.12-slim\nWORKDIR /app\nRUN pip install --no-cache-dir httpx\n"
        'COPY . /app\nCMD ["python", "-m", "bot"]\n'
    )
    out = tmp_path / "out"
    harden_folder(proj, out)
    assert _body((out / "Dockerfile.hardened").read_text()) == (
        "FROM python:3.12-slim\nWORKDIR /app\nRUN pip install --no-cache-dir httpx\n"
        'COPY ["bot", "/app/bot"]\nENV PYTHONPATH=/app\n'
        'CMD ["python", "-m", "bot"]\nWORKDIR /work\nUSER 10001:10001\n'
    )
    script = (out / "docker-run.sh").read_text()
    assert "--tag agent:hardened --file Dockerfile.hardened ../proj" in script
    assert "--env PYTHONPATH=/app \\\n" in script


def test_a_command_that_names_no_file_carries_nothing_and_says_so(tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "compose.yml").write_text(
        "services:\n  agent:\n    image: agent:1\n    working_dir: /app\n"
        "    command: [agent-cli, serve]\n    volumes: ['.:/app']\n"
    )
    result = harden_folder(proj, tmp_path / "out")
    assert not (tmp_path / "out" / "Dockerfile.hardened").exists()
    [svc] = result.plan.spec.services
    assert svc.code is None
    assert svc.notes[-1] == (
        "the agent's code came from the project (bind mount .:/app), but its start command "
        "(agent-cli serve) names no file of it: nothing was carried, so the agent may not "
        "start; name the script or package in the command"
    )


def test_a_build_line_with_an_unknown_flag_is_not_vouched_for() -> None:
    text = "docker build --tag a:1 --secret id=x . >/dev/null\nexec docker run a:1\n"
    with pytest.raises(RunParseError, match=r"^unknown build flag '--secret': cannot verify"):
        parse_build_line(text)
    assert parse_build_line("exec docker run a:1\n") is None


def test_a_copy_the_build_goes_on_using_is_not_narrowed(tmp_path: Path) -> None:
    # modelled on a real SDK repository: `pip install -e .` after `COPY . /app`
    proj = tmp_path / "proj"
    (proj / "tests").mkdir(parents=True)
    (proj / "Dockerfile").write_text(
        'FROM python:3.12-slim\nWORKDIR /app\nCOPY . /app\nRUN pip install -e ".[dev]"\n'
        'CMD ["python", "-m", "pytest", "tests/", "-v"]\n'
    )
    out = tmp_path / "out"
    result = harden_folder(proj, out)
    assert not (out / "Dockerfile.hardened").exists()
    [svc] = result.plan.spec.services
    assert svc.code is None
    assert svc.command == ["python", "-m", "pytest", "/app/tests", "-v"]
    assert svc.notes == (
        "the agent's code came from the project (COPY . /app), and the Dockerfile runs steps "
        "after that COPY that may need the whole project, so it was not narrowed: the project "
        "stays in the image at /app (read-only, outside the working directory /work); narrow "
        "the COPY to tests and what the install needs",
        'not narrowed: your line 4 (`RUN pip install -e ".[dev]"`) may read any file of the '
        "project: it installs .[dev] in editable mode",
        "no hardened Dockerfile is written: the dependencies are the original's",
        "relative paths rewritten: tests/ -> /app/tests",
        "PYTHONPATH=/app: `python -m` imports the package from there",
    )
