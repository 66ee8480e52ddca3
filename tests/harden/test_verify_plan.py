"""`harden --verify` runs only what this run planned (no engine): the run line it would run
is compared with the plan as data, and every setting that reaches past the container must
be the plan's; nothing is expanded from agentguard's own environment; a host folder outside
the project is never carried into an image; the agent's output stays out of SUMMARY.md
unless asked; a by-name variable gets a placeholder unless opted in.

The attacks are the ones of issue 23 and their variants (a flag spelled another way, a
value from the environment, a command substitution)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentguard.engine import UsageError
from agentguard.findings import SourceStatus
from agentguard.harden.model import HardenOptions, OptionError, validate_options
from agentguard.harden.probe_facts import HELPER_PATH, Expected
from agentguard.harden.run_script import RunParseError, parse_build_line, parse_run_script
from agentguard.harden.summary import render_summary
from agentguard.harden.verify import ToVerify, verify_script
from agentguard.harden.verify_plan import build_deviations, deviations, planned
from agentguard.harden.verify_start import PLACEHOLDER, _passed_env
from agentguard.inspect import engine as eng
from tests.harden.support import harden_folder

SCRIPT = """\
#!/bin/sh
set -eu
cd "$(dirname "$0")"
docker build --quiet --tag agent:hardened --file Dockerfile.hardened ../proj >/dev/null
exec docker run \\
  --rm \\
  --user 10001:10001 \\
  --read-only \\
  --tmpfs /work:rw,nosuid,nodev,size=64m,mode=0700,uid=10001,gid=10001 \\
  --workdir /work \\
  --cap-drop ALL \\
  --security-opt no-new-privileges:true \\
  --network none \\
  --memory 1g \\
  --pids-limit 256 \\
  --env HOME=/tmp \\
  --env GITHUB_TOKEN \\
  agent:hardened \\
  sh \\
  /app/agent.sh
"""
PLAN_ARGV = (
    "docker", "run", "--rm", "--user", "10001:10001", "--read-only",
    "--tmpfs", "/work:rw,nosuid,nodev,size=64m,mode=0700,uid=10001,gid=10001",
    "--workdir", "/work", "--cap-drop", "ALL", "--security-opt", "no-new-privileges:true",
    "--network", "none", "--memory", "1g", "--pids-limit", "256",
    "--env", "HOME=/tmp", "--env", "GITHUB_TOKEN", "agent:hardened", "sh", "/app/agent.sh",
)  # fmt: skip
PLAN_BUILD = (
    "docker", "build", "--quiet", "--tag", "agent:hardened", "--file", "Dockerfile.hardened",
    "../proj",
)  # fmt: skip
PLAN = planned(PLAN_ARGV, PLAN_BUILD)


def _asks(old: str, new: str) -> list[str]:
    assert old in SCRIPT
    text = SCRIPT.replace(old, new, 1)
    return deviations(PLAN.run, parse_run_script(text)) + build_deviations(
        PLAN.build, parse_build_line(text)
    )


def test_the_written_script_asks_for_exactly_the_plan() -> None:
    assert _asks("--rm", "--rm") == []


@pytest.mark.parametrize(
    ("old", "new", "asks"),
    [
        ("--rm \\\n", "--rm -v /:/host \\\n", ["the mount type=bind,source=/,target=/host"]),
        ("--rm \\\n", "--rm --volume=/:/host:ro \\\n", ["the mount type=bind,source=/,target=/host,readonly"]),
        ("--rm \\\n", "--rm -v ~/.ssh:/keys \\\n", ["the mount type=bind,source=~/.ssh,target=/keys"]),
        ("--rm \\\n", "--rm --mount type=bind,source=/,target=/host \\\n", ["the mount type=bind,source=/,target=/host"]),
        ("--rm \\\n", "--rm --mount=type=bind,src=/etc,dst=/e,readonly \\\n", ["the mount type=bind,source=/etc,target=/e,readonly"]),
        ("--rm \\\n", "--rm --mount type=volume,source=data,target=/work/data \\\n", ["the mount type=volume,source=data,target=/work/data"]),
        ("--rm \\\n", "--rm --tmpfs /etc \\\n", ["the tmpfs /etc:"]),
        ("--rm \\\n", "--rm --privileged \\\n", ["--privileged"]),
        ("--network none", "--network host", ["network 'host' (the plan: 'none')"]),
        ("--network none", "--net=host", ["network 'host' (the plan: 'none')"]),
        ("--rm \\\n", "--rm --pid host \\\n", ["pid namespace 'host' (the plan: None)"]),
        ("--rm \\\n", "--rm --pid=host \\\n", ["pid namespace 'host' (the plan: None)"]),
        ("--rm \\\n", "--rm --ipc host \\\n", ["ipc namespace 'host' (the plan: None)"]),
        ("--rm \\\n", "--rm --cap-add SYS_ADMIN \\\n", ["--cap-add SYS_ADMIN"]),
        ("--rm \\\n", "--rm --cap-add=ALL \\\n", ["--cap-add ALL"]),
        ("--cap-drop ALL \\\n", "", ["--cap-drop ALL removed"]),
        ("--rm \\\n", "--rm --security-opt seccomp=unconfined \\\n", ["--security-opt seccomp=unconfined"]),
        ("--security-opt no-new-privileges:true \\\n", "", ["--security-opt no-new-privileges:true removed"]),
        ("--user 10001:10001", "--user 0", ["user '0' (the plan: '10001:10001')"]),
        ("--user 10001:10001", "-u=0:0", ["user '0:0' (the plan: '10001:10001')"]),
        ("--read-only \\\n", "", ["a writable root filesystem (no --read-only)"]),
        ("--workdir /work", "--workdir /", ["working directory '/' (the plan: '/work')"]),
        ("--memory 1g", "--memory 1t", ["memory limit '1t' (the plan: '1g')"]),
        ("--rm \\\n", "--rm -e SSH_AUTH_SOCK \\\n", ["--env SSH_AUTH_SOCK (a value from the caller's environment)"]),
        ("--rm \\\n", "--rm --env-file /etc/shadow \\\n", ["--env-file /etc/shadow"]),
        ("  agent:hardened \\\n", "  alpine:3 \\\n", ["image 'alpine:3' (the plan: 'agent:hardened')"]),
        ("../proj >", "/ >", ["build context '/' (the plan: '../proj')"]),
        ("--file Dockerfile.hardened", "--file ../proj/Dockerfile", ["Dockerfile '../proj/Dockerfile' (the plan: 'Dockerfile.hardened')"]),
        ("../proj >", "--build-arg X=1 ../proj >", ["build arguments {'X': '1'} (the plan: {})"]),
    ],
)  # fmt: skip
def test_whatever_reaches_past_the_container_must_be_the_plan_s(
    old: str, new: str, asks: list[str]
) -> None:
    assert _asks(old, new) == asks


def test_what_stays_inside_the_container_may_differ() -> None:
    """A literal variable, the command, an entrypoint: a person's edit of the command is
    what --verify-script is for; none reaches the host."""
    assert _asks("--env HOME=/tmp", "--env=HOME=/tmp --env LANG=C.UTF-8") == []
    assert _asks("  sh \\\n  /app/agent.sh", "  sh -c 'rm -rf / ; echo $HOME'") == []
    assert _asks("--rm \\\n", "--rm --entrypoint /bin/sh --name x -i -t \\\n") == []


@pytest.mark.parametrize(
    ("old", "new", "error"),
    [
        ("--rm \\\n", "--rm $PRIV \\\n", "is expanded by the shell"),
        ("--rm \\\n", '--rm "${FLAGS}" \\\n', "is expanded by the shell"),
        ("--rm \\\n", '--rm -v "$(pwd)":/w \\\n', "is expanded by the shell"),
        ("--rm \\\n", "--rm -v `pwd`:/w \\\n", "is expanded by the shell"),
        ("  /app/agent.sh", '  "$GITHUB_TOKEN"', "is expanded by the shell"),
        ("--rm \\\n", "--rm --device /dev/sda \\\n", "unknown flag '--device'"),
        ("--rm \\\n", "--rm --userns host \\\n", "unknown flag '--userns'"),
        ("--rm \\\n", "--rm --privileged=true \\\n", "unknown flag '--privileged=true'"),
        ("--rm \\\n", "--rm --volumes-from other \\\n", "unknown flag '--volumes-from'"),
        ("--rm \\\n", "--rm --gpus all \\\n", "unknown flag '--gpus'"),
        ("exec docker run", "docker run -v /:/h x\nexec docker run", "found 2"),
        ("--network none", "--network none --network host", "--network is given twice"),
        ("--user 10001:10001", "--user 10001:10001 -u 0", "-u is given twice"),
    ],
)
def test_what_the_reader_cannot_vouch_for_is_an_error(old: str, new: str, error: str) -> None:
    text = SCRIPT.replace(old, new, 1)
    with pytest.raises(RunParseError, match=error):
        parse_run_script(text)


def test_a_build_argument_from_the_environment_is_an_error() -> None:
    text = SCRIPT.replace("../proj >", '--build-arg "T=$GITHUB_TOKEN" ../proj >')
    with pytest.raises(RunParseError, match="is expanded by the shell"):
        parse_build_line(text)


def _item(text: str) -> ToVerify:
    return ToVerify(
        label="docker-run.sh",
        text=text,
        plan=PLAN,
        expected=Expected("/work", "none", ("/work",), (), (), HELPER_PATH),
        base=Path("/nonexistent"),
        root=None,
    )


def test_a_line_beyond_the_plan_is_an_ag501_and_the_engine_is_not_even_asked() -> None:
    asked: list[int] = []

    def connect() -> eng.Engine:
        asked.append(1)
        raise AssertionError("verify connected for a refused line")

    text = SCRIPT.replace("--rm \\\n", "--rm -v /:/host \\\n", 1).replace(
        "--network none", "--network host"
    )
    result = verify_script(_item(text), connect=connect)
    assert asked == []
    [finding] = result.findings
    assert finding.rule_id == "AG501"
    assert finding.evidence == {
        "probe": "plan",
        "image": "agent:hardened",
        "asks": ["network 'host' (the plan: 'none')", "the mount type=bind,source=/,target=/host"],
    }
    assert [(s.name, s.status, s.reason) for s in result.sources] == [
        (
            "plan (docker-run.sh)",
            SourceStatus.OK,
            "VIOLATED: the run line asks for what the plan did not make, so nothing was run: "
            "network 'host' (the plan: 'none'); the mount type=bind,source=/,target=/host",
        ),
        (
            "agent-start (docker-run.sh)",
            SourceStatus.SKIPPED,
            "not started: the run line asks for what the plan did not make",
        ),
    ]


def test_a_by_name_variable_gets_a_placeholder_unless_opted_in(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_the-caller-s-real-token")
    args = parse_run_script(SCRIPT)
    assert _passed_env(args, {}) == (
        ["HOME=/tmp", f"GITHUB_TOKEN={PLACEHOLDER}"],
        [],
    )
    assert _passed_env(args, {"GITHUB_TOKEN": "opted-in"}) == (
        ["HOME=/tmp", "GITHUB_TOKEN=opted-in"],
        ["opted-in"],
    )


@pytest.mark.parametrize("name", ["", "A B", "X=1", "$X", "1ABC"])
def test_pass_env_takes_names_only(name: str) -> None:
    with pytest.raises(OptionError, match="--pass-env"):
        validate_options(HardenOptions(target="x", verify=True, pass_env=(name,)))


def test_verify_script_and_summary_output_need_verify() -> None:
    with pytest.raises(OptionError, match="--verify-script needs --verify"):
        validate_options(HardenOptions(target="x", verify_script=Path("s.sh")))
    with pytest.raises(OptionError, match="--summary-output needs --verify"):
        validate_options(HardenOptions(target="x", summary_output=True))


# -- no host folder outside the project goes into an image -------------------------------


def _compose(root: Path, body: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "compose.yaml").write_text("services:\n  agent:\n" + body)
    return root


def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("-----BEGIN OPENSSH PRIVATE KEY----- fake\n")
    monkeypatch.setenv("HOME", str(home))
    return home


@pytest.mark.parametrize(
    "volume",
    ["~/.ssh:/app", "HOME/.ssh:/app", "./keys:/app"],
    ids=["tilde", "absolute", "link-in-the-project"],
)
def test_a_bind_mount_of_a_host_folder_is_never_carried_into_the_image(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, volume: str
) -> None:
    home = _home(tmp_path, monkeypatch)
    project = _compose(
        tmp_path / "proj",
        "    image: agent:1\n    working_dir: /app\n    command: [cat, id_ed25519]\n"
        f"    volumes: ['{volume.replace('HOME', str(home))}']\n",
    )
    os.symlink(home / ".ssh", project / "keys")
    result = harden_folder(project, tmp_path / "out")
    [svc] = result.plan.spec.services
    assert svc.code is None
    assert result.plan.code == {}
    assert not (tmp_path / "out" / "Dockerfile.hardened").exists()
    assert f"{home / '.ssh'}, outside the project: it is not carried" in " ".join(svc.notes)
    assert "docker build" not in (tmp_path / "out" / "docker-run.sh").read_text()


@pytest.mark.parametrize(
    "build", ["{context: .., dockerfile: proj/Dockerfile}", "./ctx"], ids=["parent", "link"]
)
def test_a_build_context_outside_the_project_is_never_carried(tmp_path: Path, build: str) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "Dockerfile").write_text(
        "FROM base:1\nWORKDIR /app\nCOPY . /app\nCMD [sh, run.sh]\n"
    )
    (outside / "run.sh").write_text("echo\n")
    project = _compose(tmp_path / "proj", f"    build: {build}\n")
    (project / "Dockerfile").write_text(
        "FROM base:1\nWORKDIR /app\nCOPY . /app\nCMD [sh, run.sh]\n"
    )
    (project / "run.sh").write_text("echo\n")
    os.symlink(outside, project / "ctx")
    result = harden_folder(project, tmp_path / "out")
    [svc] = result.plan.spec.services
    assert svc.code is None
    assert result.plan.code == {}
    assert "outside the project: it is not carried" in " ".join(svc.notes)


def test_the_agent_s_output_stays_out_of_summary_md_unless_asked(tmp_path: Path) -> None:
    project = _compose(tmp_path / "proj", "    image: agent:1\n")
    result = harden_folder(project, tmp_path / "out")
    facts = [
        {
            "probe": "agent-start",
            "script": "docker-run.sh",
            "status": "violated",
            "detail": "the agent cannot start: it exited 1: nekot-eht",
            "output": ["nekot-eht"],
        }
    ]
    opts = HardenOptions(target=str(project), out=tmp_path / "out", verify=True)
    quiet = render_summary(result.plan, opts, target="t", kind="project", verification=facts)
    assert "nekot-eht" not in quiet
    assert (
        "- `docker-run.sh`: agent-start: violated -- its output is in the report "
        "(--summary-output copies it here)" in quiet
    )
    shown = render_summary(
        result.plan, opts, target="t", kind="project", verification=facts, show_output=True
    )
    assert "nekot-eht" in shown


def test_verify_script_must_name_a_script_of_the_plan(tmp_path: Path) -> None:
    project = _compose(tmp_path / "proj", "    image: agent:1\n  other:\n    image: other:1\n")
    with pytest.raises(UsageError, match="--verify-script"):
        harden_folder(
            project, tmp_path / "out", verify=True, verify_script=tmp_path / "elsewhere.sh"
        )


# -- project data written into the script cannot add a flag or a mount field -------------


def test_a_volume_name_cannot_smuggle_a_bind_of_the_host_root(tmp_path: Path) -> None:
    """`evil,type=bind,source=/` as a named volume would have been written into
    `--mount type=volume,source=evil,type=bind,source=/,target=/data`: docker's last key
    wins, so the script itself would mount the host's root."""
    project = _compose(
        tmp_path / "proj",
        "    image: agent:1\n    volumes: ['evil,type=bind,source=/:/data', 'cache:/c,x=1']\n",
    )
    result = harden_folder(project, tmp_path / "out")
    script = (tmp_path / "out" / "docker-run.sh").read_text()
    assert "--mount" not in script
    [svc] = result.plan.spec.services
    assert svc.volumes == ()
    notes = " ".join(svc.notes)
    assert "evil,type=bind,source=/ -> /data (not a volume name the engine accepts)" in notes
    assert "cache -> /c,x=1 (its target is not a plain absolute path)" in notes


@pytest.mark.parametrize(
    "spec",
    [
        "type=volume,source=evil,type=bind,source=/,target=/data",
        "type=bind,src=/a,source=/,target=/x",
        "type=bind,source=/a,target=/x,dst=/etc",
        'type=bind,"source=/a,b",target=/x',
    ],
)
def test_a_mount_field_given_twice_or_quoted_is_an_error(spec: str) -> None:
    with pytest.raises(RunParseError, match="--mount"):
        parse_run_script(f"docker run --mount '{spec}' a:1\n")


def test_a_plan_that_cannot_be_vouched_for_runs_nothing() -> None:
    bad = planned(
        ("docker", "run", "--mount", "type=bind,source=/,source=/x,target=/y", "a:1"), None
    )
    assert bad.error == "--mount 'type=bind,source=/,source=/x,target=/y': source is given twice"
    result = verify_script(
        ToVerify("docker-run.sh", SCRIPT, bad, _item(SCRIPT).expected, Path("/x"), None),
        connect=lambda: (_ for _ in ()).throw(AssertionError("connected")),
    )
    assert result.findings == []
    assert [(s.name, s.status, s.error_code) for s in result.sources] == [
        ("docker-run.sh", SourceStatus.FAILED, "verify-plan-unreadable"),
        ("agent-start (docker-run.sh)", SourceStatus.SKIPPED, None),
    ]


def test_a_newline_inside_an_argument_stays_in_it(tmp_path: Path) -> None:
    """A compose command word holding a newline is one word in the script; read back it is
    the same word, not a new line the reader could take for a command (before: a crash)."""
    project = _compose(
        tmp_path / "proj",
        '    image: agent:1\n    command: ["sh", "-c", "echo hi\\n--privileged \\\\"]\n',
    )
    result = harden_folder(project, tmp_path / "out")
    text = (tmp_path / "out" / "docker-run.sh").read_text()
    args = parse_run_script(text)
    assert args.command == ["sh", "-c", "echo hi\n--privileged \\"]
    assert not args.privileged
    plan = planned(result.plan.argv["agent"], None)
    assert deviations(plan.run, args) == []


def test_a_code_file_whose_name_holds_a_mount_field_is_not_carried(tmp_path: Path) -> None:
    from agentguard.harden.code import named_entries

    (tmp_path / "a,b.py").write_text("")
    (tmp_path / "b.py").write_text("")
    assert named_entries(tmp_path, ["python", "a,b.py", "b.py"], "/app") == (
        ["b.py"],
        False,
        ["'a,b.py' is not carried: a name with a comma, quote, `=` or space"],
    )
