"""A hardened configuration that does not start the agent fails `--verify` (AG501 naming
the cause), so does one tampered with (the project mounted back, root, capabilities), and
`--verify-command` runs in the started agent. On the real engine."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.harden.agents import AGENT_SH, build_shell_image, compose_project
from tests.harden.support import harden_cli, json_report, sources_named
from tests.inspect.engine_support import Made

pytestmark = pytest.mark.engine


@pytest.fixture(scope="module")
def made(docker_client: Any) -> Iterator[Made]:
    m = Made(docker_client)
    yield m
    m.cleanup()


@pytest.fixture(scope="module")
def shell_image(made: Made, tmp_path_factory: pytest.TempPathFactory) -> str:
    return build_shell_image(made, tmp_path_factory)


def test_an_edited_configuration_that_breaks_the_agent_fails_verify_with_ag501(
    shell_image: str, tmp_path: Path
) -> None:
    compose = compose_project(tmp_path / "proj", shell_image)
    out = tmp_path / "out"
    assert harden_cli(compose, "--out", out, "--quiet").exit_code == 0
    script = out / "docker-run.sh"
    edited = script.read_text().replace("  /app/agent.sh\n", "  /app/agent-main.sh\n")
    script.write_text(edited)

    result = harden_cli(
        compose, "--out", out, "--verify", "--verify-script", script, "--format", "json"
    )
    report = json_report(result)
    assert result.exit_code == 1, result.stdout
    # the edit is kept, the new file is beside it, and the file named is what was verified
    assert script.read_text() == edited
    assert (out / "docker-run.sh.new").is_file()
    [finding] = [f for f in report["findings"] if f["rule_id"] == "AG501"]
    cause = "sh: can't open '/app/agent-main.sh': No such file or directory"
    assert finding | {"fingerprint": None} == {
        "rule_id": "AG501",
        "title": "Hardened configuration does not hold at run time",
        "severity": "high",
        "confidence": "high",
        "message": "The hardened configuration does not hold at run time: probe agent-start: "
        f"the agent cannot start: it exited 2: {cause}.",
        "locations": [{"path": str(script), "note": "probe agent-start"}],
        "evidence": {
            "probe": "agent-start",
            "image": f"{shell_image}-hardened",
            "state": "exited",
            "exit_code": 2,
            "output": [cause],
        },
        "fix": finding["fix"],
        "ambiguous": False,
        "suppressed": None,
        "fingerprint": None,
    }
    assert finding["fix"]["description"].startswith("Make the hardened configuration start")


@pytest.mark.parametrize(
    ("old", "new", "asks"),
    [
        (
            "--tmpfs /work:rw,nosuid,nodev,size=64m,mode=0700,uid=10001,gid=10001",
            "--mount type=bind,source=PROJ,target=/work",
            [
                "the mount type=bind,source=PROJ,target=/work",
                "the tmpfs at /work removed",
            ],
        ),
        ("--user 10001:10001", "--user 0:0", ["user '0:0' (the plan: '10001:10001')"]),
        (
            "--user 10001:10001",
            "--user 0:0 --cap-add SYS_ADMIN",
            ["user '0:0' (the plan: '10001:10001')", "--cap-add SYS_ADMIN"],
        ),
    ],
    ids=["project-mounted-back", "root", "added-capabilities"],
)
def test_a_tampered_configuration_named_to_verify_is_refused_before_it_runs(
    shell_image: str, tmp_path: Path, old: str, new: str, asks: list[str]
) -> None:
    """The user names an edited script (--verify-script): what it asks beyond the plan is
    an AG501 finding, and neither the probe nor the agent is started."""
    compose = compose_project(tmp_path / "proj", shell_image)
    out = tmp_path / "out"
    assert harden_cli(compose, "--out", out, "--quiet").exit_code == 0
    script = out / "docker-run.sh"
    text = script.read_text()
    assert old in text
    proj = str(tmp_path / "proj")
    script.write_text(text.replace(old, new.replace("PROJ", proj), 1))
    result = harden_cli(
        compose, "--out", out, "--verify", "--verify-script", script, "--format", "json"
    )
    assert result.exit_code == 1, result.stdout
    report = json_report(result)
    [finding] = [f for f in report["findings"] if f["rule_id"] == "AG501"]
    assert finding["evidence"] == {
        "probe": "plan",
        "image": f"{shell_image}-hardened",
        "asks": [a.replace("PROJ", proj) for a in asks],
    }
    probes = sources_named(report, "probe")
    assert probes[f"agent-start ({script})"] == (
        "skipped",
        "not started: the run line asks for what the plan did not make",
    )
    assert [p for p in probes if not p.startswith(("plan ", "agent-start "))] == []
    assert "engine" not in {s["kind"] for s in report["sources"] if "build" in s["name"]}


@pytest.mark.parametrize(
    ("check", "verdict"),
    [
        (
            "test -f /app/agent.sh",
            (
                "ok",
                "held: the agent is still running after 1s and `test -f /app/agent.sh` exited 0",
            ),
        ),
        (
            "test -f /app/docs/plan.md",
            (
                "ok",
                "VIOLATED: the agent is still running after 1s, but `test -f /app/docs/plan.md` exited 1",
            ),
        ),
    ],
    ids=["passes", "fails"],
)
def test_a_verify_command_runs_in_the_started_agent(
    shell_image: str, tmp_path: Path, check: str, verdict: tuple[str, str]
) -> None:
    compose = compose_project(tmp_path / "proj", shell_image)
    (tmp_path / "proj" / "agent.sh").write_text(AGENT_SH + "sleep 30\n")
    out = tmp_path / "out"
    result = harden_cli(
        compose,
        "--out",
        out,
        "--verify",
        "--settle",
        "1",
        "--verify-command",
        check,
        "--format",
        "json",
    )
    assert sources_named(json_report(result), "probe")["agent-start (docker-run.sh)"] == verdict
    assert result.exit_code == (0 if verdict[1].startswith("held") else 1)
