"""`agentguard harden --verify` on the real engine: build images locally (FROM scratch plus a
static busybox), write the hardened config, run it, probe it, assert -- and the failure
side: a hardened script tampered with fails verification, naming the probe that caught it.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentguard.harden.probe import create_kwargs
from agentguard.harden.probe_facts import HELPER_PATH, Expected
from agentguard.harden.run_script import parse_build_line, parse_run_script
from agentguard.harden.verify import ToVerify, verify_script
from agentguard.harden.verify_plan import PlannedRun
from agentguard.rules.runtime import PROBES
from tests.harden.support import harden_cli, json_report, sources_named
from tests.inspect.engine_support import Made, engine_socket, inspect_cli, report_of, unique

pytestmark = pytest.mark.engine

AGENT_SH = """\
echo "cwd=$(pwd)"
echo "uid=$(/bin/busybox id -u)"
echo "entries=$(/bin/busybox ls -A | /bin/busybox wc -l)"
echo "home=$HOME"
"""


@pytest.fixture(scope="module")
def made(docker_client: Any) -> Iterator[Made]:
    m = Made(docker_client)
    yield m
    m.cleanup()


@pytest.fixture(scope="module")
def project_image(made: Made, tmp_path_factory: pytest.TempPathFactory) -> str:
    """An agent image the usual way: the project copied into the working directory, as root."""
    context = tmp_path_factory.mktemp("harden-image")
    (context / "proj" / "docs").mkdir(parents=True)
    (context / "proj" / "agent.sh").write_text(AGENT_SH)
    (context / "proj" / "docs" / "plan.md").write_text("# 2027 plan: do not retell\n")
    (context / "proj" / ".env").write_text("TRACKER_TOKEN=not-a-real-one\n")
    tag = f"{unique('harden')}:1"
    made.build(
        tag,
        context,
        "FROM scratch\nCOPY busybox /bin/busybox\nCOPY proj /app\nWORKDIR /app\n"
        'CMD ["/bin/busybox", "sh", "agent.sh"]\n',
    )
    return tag


def _held(report: dict[str, Any]) -> dict[str, str]:
    probes = sources_named(report, "probe")
    return {
        p: probes[f"{p} (docker-run.sh)"][0] + ": " + str(probes[f"{p} (docker-run.sh)"][1])
        for p in PROBES
    }


def test_the_hardened_image_runs_and_every_probe_holds(
    project_image: str, tmp_path: Path, docker_client: Any
) -> None:
    out = tmp_path / "hardened"
    result = harden_cli(project_image, "--out", out, "--verify", "--format", "json")
    report = json_report(result)
    assert result.exit_code == 0, result.stdout
    assert [(f["rule_id"], f["suppressed"]) for f in report["findings"]] == [
        ("AG201", "fixed by agentguard harden: docker-run.sh, docker-compose.hardened.yml, kubernetes.yaml"),
        ("AG401", "fixed by agentguard harden: docker-run.sh, docker-compose.hardened.yml, kubernetes.yaml"),
    ]  # fmt: skip
    assert _held(report) == {
        "user": "ok: held: uid 10001, gid 10001",
        "working-directory": "ok: held: /work is an empty tmpfs and the process starts there",
        "root-filesystem": "ok: held: read-only (checked: a write to / inside, the engine's ReadonlyRootfs)",
        "capabilities": "ok: held: CapEff 0000000000000000 (none effective)",
        "no-new-privileges": "ok: held: NoNewPrivs 1",
        "mounts": "ok: held: no host folder mounted besides --allow-mount, read-only (checked: /proc/self/mountinfo, the engine record)",
        "docker-socket": "ok: held: no Docker socket mounted",
        "network": "ok: held: none (engine NetworkMode none; interfaces lo)",
    }  # fmt: skip
    assert "## Verification on the engine" in (out / "SUMMARY.md").read_text()

    # the written script itself runs the agent: in the empty tmpfs, unprivileged, the
    # relative `agent.sh` of the image rewritten to /app/agent.sh
    run = subprocess.run(
        ["sh", str(out / "docker-run.sh")], capture_output=True, text=True, timeout=120, check=False
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ["cwd=/work", "uid=10001", "entries=0", "home=/tmp"]

    # round trip on the engine: inspect a container made from the written line
    args = parse_run_script((out / "docker-run.sh").read_text())
    container = docker_client.containers.create(args.image, **create_kwargs(args, None))
    try:
        inspected = report_of(inspect_cli(container.id, "--kind", "container", "--format", "json"))
    finally:
        container.remove(force=True)
    assert inspected["complete"] is True
    assert {f["rule_id"] for f in inspected["findings"]} & {
        "AG201",
        "AG401",
        "AG202",
        "AG406",
        "AG407",
    } == set()


def _expected(
    workdir: str = "/work", network: str = "none", allowed: tuple[tuple[str, str], ...] = ()
) -> Expected:
    return Expected(
        workdir=workdir,
        network=network,
        tmpfs=("/work", "/tmp"),
        allowed=allowed,
        volumes=(),
        helper=HELPER_PATH,
    )


@pytest.fixture()
def network(docker_client: Any) -> Iterator[str]:
    name = unique("harden-net")
    net = docker_client.networks.create(name, internal=True)
    yield name
    net.remove()


@pytest.fixture()
def written(project_image: str, tmp_path: Path) -> Path:
    out = tmp_path / "hardened"
    result = harden_cli(project_image, "--out", out, "--quiet")
    assert result.exit_code == 0, result.stdout
    return out / "docker-run.sh"


def _tamper(script: Path, old: str, new: str) -> None:
    text = script.read_text()
    assert old in text
    script.write_text(text.replace(old, new, 1))


def _violated(script: Path, expected: Expected | None = None) -> tuple[set[str], list[Any]]:
    """The probes that caught a tampered script. The plan is taken to be the tampered line
    itself, so the probes -- the second line of defence -- run; harden's own --verify
    refuses such a line before anything runs (tests/harden/test_verify_plan.py)."""
    text = script.read_text()
    item = ToVerify(
        label="docker-run.sh",
        text=text,
        plan=PlannedRun(parse_run_script(text), parse_build_line(text)),
        expected=expected or _expected(),
        base=script.parent,
        root=None,
    )
    result = verify_script(item)
    failed = [s for s in result.sources if s.status.value == "failed"]
    assert failed == [], failed
    return {f.evidence["probe"] for f in result.findings}, result.findings


TMPFS_WORK = "--tmpfs /work:rw,nosuid,nodev,size=64m,mode=0700,uid=10001,gid=10001 \\\n"


def test_the_project_mounted_back_in_fails_with_the_probes_that_caught_it(
    written: Path, tmp_path: Path
) -> None:
    project = tmp_path / "checkout"
    (project / "docs").mkdir(parents=True)
    (project / "docs" / "plan.md").write_text("internal\n")
    (project / "CLAUDE.md").write_text("notes\n")
    _tamper(written, TMPFS_WORK, f"--mount type=bind,source={project},target=/work \\\n")

    probes, findings = _violated(written)
    assert probes == {"working-directory", "mounts"}
    workdir = next(f for f in findings if f.evidence["probe"] == "working-directory")
    container = workdir.evidence["container"]
    assert workdir.to_json() | {"fingerprint": None} == {
        "rule_id": "AG501",
        "title": "Hardened configuration does not hold at run time",
        "severity": "high",
        "confidence": "high",
        "message": "The hardened configuration does not hold at run time: probe working-directory: "
        "/work holds 2 entries (CLAUDE.md, docs); /work is a ext4 mount of "
        f"{project}, not an empty tmpfs.",
        "locations": [
            {"path": "docker-run.sh", "note": f"probe working-directory, container {container}"}
        ],
        "evidence": {
            "probe": "working-directory",
            "image": workdir.evidence["image"],
            "container": container,
            "workdir": "/work",
            "entries": ["CLAUDE.md", "docs"],
        },
        "fix": {
            "description": "Keep the working directory an empty tmpfs: remove any mount at, above "
            "or inside it, and mount the data the agent needs read-only elsewhere "
            "(`--allow-mount`). Regenerate docker-run.sh with `agentguard harden`.",
            "safe": False,
        },
        "ambiguous": False,
        "suppressed": None,
        "fingerprint": None,
    }
    mounts = next(f for f in findings if f.evidence["probe"] == "mounts")
    assert mounts.evidence["unexpected"] == [
        f"ext4 mount of {project} at /work (at the working directory)",
        f"bind mount of the host's {project} at /work (engine record)",
    ]


@pytest.mark.parametrize(
    ("old", "new", "probes"),
    [
        ("--read-only \\\n", "", {"root-filesystem"}),
        ("--user 10001:10001", "--user 0:0", {"user"}),
        ("--cap-drop ALL \\\n", "", set()),  # an unprivileged user still has no capabilities
        ("--user 10001:10001", "--user 0:0 --cap-add SYS_ADMIN", {"user", "capabilities"}),
        ("--security-opt no-new-privileges:true \\\n", "", {"no-new-privileges"}),
        # the egress probe reaches this host over the network put back
        ("--network none", "--network NETWORK", {"network", "egress"}),
    ],
)
def test_each_undone_setting_is_caught_by_its_probe(
    written: Path, old: str, new: str, probes: set[str], network: str
) -> None:
    _tamper(written, old, new.replace("NETWORK", network))
    assert _violated(written)[0] == probes


def test_the_docker_socket_mounted_in_is_caught(written: Path) -> None:
    socket = engine_socket()
    _tamper(
        written,
        "--env HOME=/tmp \\\n",
        f"--env HOME=/tmp \\\n  --mount type=bind,source={socket},target=/var/run/docker.sock \\\n",
    )
    probes, findings = _violated(written)
    assert probes == {"docker-socket"}
    assert findings[0].evidence["mounts"] == [
        "/var/run/docker.sock",
        f"{socket} -> /var/run/docker.sock",
    ]


def test_without_a_static_helper_the_inside_is_not_verified_never_passed(
    project_image: str, tmp_path: Path
) -> None:
    result = harden_cli(
        project_image,
        "--out",
        tmp_path / "o",
        "--verify",
        "--format",
        "json",
        env={"AGENTGUARD_PROBE_HELPER": "/bin/ls"},
    )
    assert result.exit_code == 3
    report = json_report(result)
    probes = sources_named(report, "probe")
    why = "not verified: no probe inside: /bin/ls is not a static executable, so it cannot run inside any image"
    assert {p: probes[f"{p} (docker-run.sh)"] for p in PROBES} == {
        "user": ("failed", why),
        "working-directory": ("failed", why),
        "root-filesystem": ("ok", "held: read-only (checked: the engine's ReadonlyRootfs)"),
        "capabilities": ("failed", why),
        "no-new-privileges": ("failed", why),
        "mounts": ("ok", "held: no host folder mounted besides --allow-mount, read-only (checked: the engine record)"),
        "docker-socket": ("ok", "held: no Docker socket mounted"),
        "network": ("ok", "held: none (engine NetworkMode none)"),
    }  # fmt: skip
    failed = [s for s in report["sources"] if s["status"] == "failed"]
    assert {s["error_code"] for s in failed} == {"probe-helper-missing", "probe-not-verified"}


def test_a_named_network_and_read_only_data_hold(
    project_image: str, tmp_path: Path, network: str
) -> None:
    data = tmp_path / "inputs"
    data.mkdir()
    (data / "question.txt").write_text("what are our tasks?\n")
    out = tmp_path / "o"
    result = harden_cli(
        project_image, "--out", out, "--network", network, "--allow-mount", f"{data}:/data",
        "--verify", "--format", "json",
    )  # fmt: skip
    report = json_report(result)
    assert result.exit_code == 0, result.stdout
    held = _held(report)
    assert (
        held["network"]
        == f"ok: held: {network} (engine NetworkMode {network}; interfaces lo, eth0)"
    )
    assert held["mounts"].startswith("ok: held:")
    assert (
        f"--mount type=bind,source={data},target=/data,readonly"
        in (out / "docker-run.sh").read_text()
    )

    # the same data made writable is caught
    _tamper(out / "docker-run.sh", "target=/data,readonly", "target=/data")
    probes, findings = _violated(
        out / "docker-run.sh", _expected(network=network, allowed=((str(data), "/data"),))
    )
    assert probes == {"mounts"}
    assert findings[0].evidence["unexpected"] == [
        f"ext4 mount of {data} at /data",
        f"{data} at /data is writable (engine record)",
    ]


def test_an_image_that_is_not_there_is_incomplete_not_clean(tmp_path: Path) -> None:
    missing = f"{unique('harden-missing')}:1"
    result = harden_cli(
        missing, "--kind", "image", "--out", tmp_path / "o", "--verify", "--format", "json"
    )
    assert result.exit_code == 3
    report = json_report(result)
    assert report["complete"] is False
    failed = {
        (s["kind"], s["name"], s["error_code"])
        for s in report["sources"]
        if s["status"] == "failed"
    }
    assert failed == {("image", missing, "not-found")}
    # a configuration made from an input that was not read would be a guess: none is written
    assert not (tmp_path / "o").exists()
    assert "nothing written" in " ".join(report["notes"])


def test_a_service_that_builds_its_image_is_not_verified(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    (project / "compose.yaml").write_text("services:\n  agent:\n    build: .\n")
    (project / "Dockerfile").write_text("FROM scratch\nUSER 10001\n")
    result = harden_cli(project, "--out", tmp_path / "o", "--verify", "--format", "json")
    assert result.exit_code == 3
    failed = [s for s in json_report(result)["sources"] if s["status"] == "failed"]
    assert [(s["name"], s["error_code"], s["reason"]) for s in failed] == [
        (
            "docker-run.sh",
            "verify-no-image",
            "not verified: no image to run (${AGENT_IMAGE:?build the image of agent and set "
            "AGENT_IMAGE}); the service builds its image",
        )
    ]
    assert os.access(tmp_path / "o" / "docker-run.sh", os.X_OK)


def test_a_container_run_the_risky_way_is_rewritten_and_holds(
    project_image: str, made: Made, tmp_path: Path
) -> None:
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / "plan.md").write_text("internal\n")
    secret = "sk-ant-api03-" + "Z" * 40
    name = unique("harden-risky")
    made.container(
        project_image,
        name=name,
        privileged=True,
        cap_add=["NET_ADMIN"],
        environment={"ANTHROPIC_API_KEY": secret, "LOG_LEVEL": "debug"},
        volumes={str(checkout): {"bind": "/app", "mode": "rw"}},
    )
    out = tmp_path / "o"
    result = harden_cli(name, "--kind", "container", "--out", out, "--verify", "--format", "json")
    report = json_report(result)
    assert result.exit_code == 0, result.stdout
    fixed = {f["rule_id"] for f in report["findings"] if f["suppressed"]}
    assert fixed == {"AG202", "AG401", "AG402", "AG403", "AG404", "AG406", "AG407"}
    assert [f for f in report["findings"] if not f["suppressed"]] == []
    assert all(status == "ok" for status, _ in sources_named(report, "probe").values())
    script = (out / "docker-run.sh").read_text()
    assert "--env ANTHROPIC_API_KEY \\\n  --env LOG_LEVEL=debug \\\n" in script
    # the container's own command, its relative script made absolute
    assert script.endswith(f"  {project_image} \\\n  /bin/busybox \\\n  sh \\\n  /app/agent.sh\n")
    written = "".join(p.read_text() for p in out.rglob("*") if p.is_file())
    assert secret not in written and secret not in result.stdout
    assert str(checkout) not in script
