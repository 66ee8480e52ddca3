"""``harden --env-file PATH``: the variables passed by name come from a file the user names
(docker-run.sh ``--env-file PATH``, compose ``env_file: [PATH]``) instead of ``--env NAME`` /
``NAME:``; harden never reads the file, so none of its values can reach an output. On the
real engine the written docker-run.sh and ``--verify`` pass the file's value into the
container, and the agent prints it back."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from agentguard.harden.run_script import parse_run_script
from tests.harden.agents import KEY, build_shell_image, compose_project, run_script, verification
from tests.harden.support import harden_cli, harden_folder, json_report, sources_named, written_text
from tests.inspect.engine_support import Made


def _env_file(tmp_path: Path) -> Path:
    path = tmp_path / "secrets" / "agent.env"
    path.parent.mkdir()
    path.write_text(f"# the agent's key\nAGENT_API_KEY={KEY}\n")
    return path


def test_the_secrets_come_from_the_named_file_and_its_values_never_reach_an_output(
    tmp_path: Path,
) -> None:
    compose_project(tmp_path / "proj", "agent:1")
    text = (tmp_path / "proj" / "compose.yml").read_text()
    (tmp_path / "proj" / "compose.yml").write_text(text + "      MODE: prod\n")
    env_file = _env_file(tmp_path)
    out = tmp_path / "out"
    result = harden_folder(tmp_path / "proj", out, env_file=str(env_file))
    assert not [s for s in result.report.sources if s.status.value == "failed"]

    script = (out / "docker-run.sh").read_text()
    assert f"  --env-file {env_file} \\\n  --env MODE=prod \\\n" in script
    assert "--env AGENT_API_KEY" not in script
    args = parse_run_script(script)
    assert (args.env_files, args.env) == ([str(env_file)], ["HOME=/tmp", "MODE=prod"])

    compose = yaml.safe_load((out / "docker-compose.hardened.yml").read_text())
    body = compose["services"]["agent"]
    assert body["env_file"] == [str(env_file)]
    assert body["environment"] == {"HOME": "/tmp", "MODE": "prod"}
    # Kubernetes keeps its Secret; the summary names the file and what it must hold
    assert "key: AGENT_API_KEY" in (out / "kubernetes.yaml").read_text()
    assert (
        f"- secrets from `{env_file}` (docker `--env-file`, compose `env_file`), which must "
        "hold `AGENT_API_KEY`; harden never reads it, and no value is written here."
    ) in (out / "SUMMARY.md").read_text()
    assert KEY not in written_text(out)


def test_the_named_file_is_not_read_so_it_need_not_exist_yet(tmp_path: Path) -> None:
    compose_project(tmp_path / "proj", "agent:1")
    os.mkfifo(tmp_path / "fifo.env")  # a read would block: harden must not open it
    out = tmp_path / "out"
    harden_folder(tmp_path / "proj", out, env_file=str(tmp_path / "fifo.env"))
    assert f"--env-file {tmp_path / 'fifo.env'}" in (out / "docker-run.sh").read_text()


def test_a_relative_env_file_is_made_absolute(tmp_path: Path, monkeypatch: Any) -> None:
    compose_project(tmp_path / "proj", "agent:1")
    monkeypatch.chdir(tmp_path)
    harden_folder(tmp_path / "proj", tmp_path / "out", env_file="agent.env")
    compose = yaml.safe_load((tmp_path / "out" / "docker-compose.hardened.yml").read_text())
    assert compose["services"]["agent"]["env_file"] == [str(tmp_path / "agent.env")]


@pytest.fixture(scope="module")
def made(docker_client: Any) -> Iterator[Made]:
    m = Made(docker_client)
    yield m
    m.cleanup()


@pytest.mark.engine
def test_on_the_engine_the_file_s_value_arrives_in_the_container(
    made: Made, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    image = build_shell_image(made, tmp_path_factory)
    compose = compose_project(tmp_path / "proj", image)
    env_file = _env_file(tmp_path)
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if k != "AGENT_API_KEY"}
    result = harden_cli(
        compose, "--out", out, "--env-file", env_file, "--verify", "--format", "json", env=env
    )
    report = json_report(result)
    assert result.exit_code == 0, result.stdout
    probes = sources_named(report, "probe")
    assert probes["agent-start (docker-run.sh)"] == ("ok", "held: the agent ran and exited 0")
    # --verify passed the file's value, as docker would, and masked it in what it kept
    assert verification(report, "agent-start")["output"][:2] == ["agent up", "key=REDACTED"]
    assert KEY not in result.stdout
    assert KEY not in written_text(out)

    run = run_script(out / "docker-run.sh", AGENT_API_KEY="")
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[:2] == ["agent up", f"key={KEY}"]

    # an env file that cannot be read stops the agent: AG501, never a pass
    env_file.unlink()
    again = json_report(
        harden_cli(
            compose, "--out", out, "--env-file", env_file, "--verify", "--format", "json", env=env
        )
    )
    assert sources_named(again, "probe")["agent-start (docker-run.sh)"][1].startswith("VIOLATED")
    [ag501] = [f for f in again["findings"] if f["rule_id"] == "AG501"]
    assert "the --env-file was not read" in ag501["message"], ag501["message"]


def test_the_original_s_env_file_can_be_named_again_without_being_read(tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / ".env").write_text(f"AGENT_API_KEY={KEY}\n")
    (proj / "compose.yml").write_text(
        "services:\n  agent:\n    image: agent:1\n    env_file: .env\n    command: [agent-cli]\n"
    )
    out = tmp_path / "out"
    result = harden_folder(proj, out, env_file=str(proj / ".env"))
    [svc] = result.plan.spec.services
    assert (
        "env_file was dropped: pass the variables it holds at run time by name, or name a file "
        "for them with --env-file (their values were not read)"
    ) in svc.notes
    compose = yaml.safe_load((out / "docker-compose.hardened.yml").read_text())
    assert compose["services"]["agent"]["env_file"] == [str(proj / ".env")]
    assert f"  --env-file {proj / '.env'} \\\n" in (out / "docker-run.sh").read_text()
    assert (
        f"- secrets from `{proj / '.env'}` (docker `--env-file`, compose `env_file`); harden "
        "never reads it"
    ) in (out / "SUMMARY.md").read_text()
    assert KEY not in written_text(out)
