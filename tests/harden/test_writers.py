"""The writers, one by one: `docker run` line (and reading it back), compose file (valid
against the Compose Specification), Kubernetes Pod, options checks, service builders."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from agentguard.harden.compose_override import compose_document, render_compose
from agentguard.harden.compose_service import service_from_compose
from agentguard.harden.docker_run import render_script, run_argv
from agentguard.harden.kubernetes import pod, quantity, render_kubernetes
from agentguard.harden.model import (
    AllowedMount,
    EnvVar,
    HardenOptions,
    NamedVolume,
    OptionError,
    ServiceSpec,
    hardened_spec,
    parse_allow_mount,
    validate_options,
)
from agentguard.harden.run_script import MountArg, RunArgs, RunParseError, parse_run_script
from agentguard.harden.services import env_vars, rewrite_relative, service_from_image
from agentguard.inspect.facts import ImageConfig
from tests.conftest import PACKAGE_SCHEMAS

OPTS = validate_options(
    HardenOptions(
        target="agent:1",
        out=Path("/tmp/agentguard-hardened"),
        allow_mounts=(AllowedMount("/srv/inputs", "/data"),),
    )
)
AGENT = ServiceSpec(
    name="agent",
    image="agent:1",
    command=("python", "/app/bot.py"),
    env=(EnvVar("ANTHROPIC_API_KEY"), EnvVar("LOG_LEVEL", "info")),
    volumes=(NamedVolume("agent-cache", "/cache", False),),
)


def test_the_docker_run_line_says_every_hardening_flag() -> None:
    spec = hardened_spec(OPTS, (AGENT,))
    assert run_argv(spec, AGENT, "agent:1") == [
        "docker", "run", "--rm", "--user", "10001:10001", "--read-only",
        "--tmpfs", "/work:rw,nosuid,nodev,size=64m,mode=0700,uid=10001,gid=10001",
        "--tmpfs", "/tmp:rw,nosuid,nodev,size=64m,mode=1777",
        "--workdir", "/work", "--cap-drop", "ALL",
        "--security-opt", "no-new-privileges:true",
        "--network", "none", "--memory", "1g", "--pids-limit", "256",
        "--env", "HOME=/tmp", "--env", "ANTHROPIC_API_KEY", "--env", "LOG_LEVEL=info",
        "--mount", "type=bind,source=/srv/inputs,target=/data,readonly",
        "--mount", "type=volume,source=agent-cache,target=/cache",
        "agent:1", "python", "/app/bot.py",
    ]  # fmt: skip


def test_the_script_reads_back_to_the_same_settings() -> None:
    spec = hardened_spec(OPTS, (AGENT,))
    text = render_script(run_argv(spec, AGENT, "agent:1"), header=["a header"])
    assert text.startswith("#!/bin/sh\n# a header\nset -eu\nexec docker run \\\n  --rm \\\n")
    assert parse_run_script(text) == RunArgs(
        image="agent:1",
        command=["python", "/app/bot.py"],
        user="10001:10001",
        workdir="/work",
        read_only=True,
        tmpfs={
            "/work": "rw,nosuid,nodev,size=64m,mode=0700,uid=10001,gid=10001",
            "/tmp": "rw,nosuid,nodev,size=64m,mode=1777",
        },
        cap_drop=["ALL"],
        security_opt=["no-new-privileges:true"],
        network="none",
        memory="1g",
        pids_limit=256,
        env=["HOME=/tmp", "ANTHROPIC_API_KEY", "LOG_LEVEL=info"],
        mounts=[
            MountArg("bind", "/srv/inputs", "/data", True),
            MountArg("volume", "agent-cache", "/cache", False),
        ],
    )


def test_an_image_placeholder_stays_expandable_and_an_edit_is_read_as_written(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spec = hardened_spec(OPTS, (AGENT,))
    argv = run_argv(spec, AGENT, "${AGENT_IMAGE:?set AGENT_IMAGE}")
    text = render_script(argv, header=[])
    assert '  "${AGENT_IMAGE:?set AGENT_IMAGE}" \\\n' in text
    assert parse_run_script(text).image == "${AGENT_IMAGE:?set AGENT_IMAGE}"
    edited = text.replace("--read-only \\\n", "-v /home/dev/project:/work \\\n  --privileged \\\n")
    args = parse_run_script(edited)
    assert (args.read_only, args.privileged) == (False, True)
    assert args.mounts[0] == MountArg("bind", "/home/dev/project", "/work", False)


@pytest.mark.parametrize(
    "word",
    ['"$PROJECT":/work', "${PROJECT}:/work", '"$(pwd)":/work', "`pwd`:/work", '"$1":/work'],
)
def test_the_reader_expands_nothing_from_its_own_environment(
    monkeypatch: pytest.MonkeyPatch, word: str
) -> None:
    """What the shell would fill in from the environment (or a command) the verifier
    cannot vouch for: it is an error, never this process's value."""
    monkeypatch.setenv("PROJECT", "/")
    spec = hardened_spec(OPTS, (AGENT,))
    text = render_script(run_argv(spec, AGENT, "agent:1"), header=[])
    edited = text.replace("--read-only \\\n", f"--read-only -v {word} \\\n")
    with pytest.raises(RunParseError, match="is expanded by the shell"):
        parse_run_script(edited)


@pytest.mark.parametrize(
    ("script", "error"),
    [
        ("docker run --gpus all agent:1\n", "unknown flag '--gpus': cannot verify what it does"),
        ("docker run --rm\n", "no image named after the flags"),
        ("echo hi\n", "expected one `docker run` command, found 0"),
        ("docker run a\ndocker run b\n", "expected one `docker run` command, found 2"),
        ("docker run --pids-limit many a\n", "--pids-limit 'many' is not a number"),
    ],
)
def test_a_script_that_cannot_be_vouched_for_is_an_error(script: str, error: str) -> None:
    with pytest.raises(RunParseError) as exc:
        parse_run_script(script)
    assert str(exc.value) == error


@pytest.fixture(scope="module")
def compose_schema() -> Any:
    path = PACKAGE_SCHEMAS / "compose-spec.json"
    assert path.is_file(), f"the vendored compose schema is missing at {path}"
    return jsonschema.Draft7Validator(json.loads(path.read_text()))


def test_the_compose_file_is_valid_and_complete(compose_schema: Any) -> None:
    opts = validate_options(
        HardenOptions(target="x", network="agents-egress", allow_mounts=OPTS.allow_mounts)
    )
    svc = ServiceSpec(
        name="agent",
        image="agent:1",
        build={"context": "../project"},
        command="python -m bot",
        env=(EnvVar("ANTHROPIC_API_KEY"),),
        volumes=(NamedVolume("cache", "/cache", True),),
        passthrough={"secrets": ["pg"], "ports": ["8080:8080"], "depends_on": ["db"]},
    )
    spec = hardened_spec(opts, (svc,))
    doc = compose_document(spec, {"secrets:pg": {"file": "../project/pg.txt"}})
    assert list(compose_schema.iter_errors(doc)) == []
    assert doc == {
        "services": {
            "agent": {
                "image": "agent:1",
                "build": {"context": "../project"},
                "command": "python -m bot",
                "user": "10001:10001",
                "read_only": True,
                "working_dir": "/work",
                "tmpfs": [
                    "/work:rw,nosuid,nodev,size=64m,mode=0700,uid=10001,gid=10001",
                    "/tmp:rw,nosuid,nodev,size=64m,mode=1777",
                ],
                "cap_drop": ["ALL"],
                "security_opt": ["no-new-privileges:true"],
                "networks": ["agents-egress"],
                "mem_limit": "1g",
                "pids_limit": 256,
                "environment": {"HOME": "/tmp", "ANTHROPIC_API_KEY": None},
                "volumes": [
                    {"type": "bind", "source": "/srv/inputs", "target": "/data", "read_only": True},
                    {"type": "volume", "source": "cache", "target": "/cache", "read_only": True},
                ],
                "secrets": ["pg"],
                "ports": ["8080:8080"],
                "depends_on": ["db"],
            }
        },
        "volumes": {"cache": {}},
        "secrets": {"pg": {"file": "../project/pg.txt"}},
        "networks": {"agents-egress": {"external": True}},
    }


def test_with_no_network_nothing_is_published_and_the_header_says_how_to_use_it(
    compose_schema: Any,
) -> None:
    svc = ServiceSpec(name="agent", image=None, passthrough={"ports": ["8080:8080"]})
    text = render_compose(hardened_spec(OPTS, (svc,)), header=["line one", ""])
    assert text.startswith("# line one\n#\nservices:\n  agent:\n")
    body = yaml.safe_load(text)["services"]["agent"]
    assert "ports" not in body
    assert body["network_mode"] == "none"
    assert body["image"] == "${AGENT_IMAGE:?set AGENT_IMAGE to the agent's image}"
    assert list(compose_schema.iter_errors(yaml.safe_load(text))) == []


def test_the_kubernetes_pod_means_the_same() -> None:
    spec = hardened_spec(OPTS, (AGENT,))
    assert pod(spec, AGENT)["spec"] == {
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "hostNetwork": False,
        "hostPID": False,
        "hostIPC": False,
        "securityContext": {
            "runAsNonRoot": True,
            "runAsUser": 10001,
            "runAsGroup": 10001,
            "fsGroup": 10001,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "containers": [
            {
                "name": "agent",
                "image": "agent:1",
                "args": ["python", "/app/bot.py"],
                "workingDir": "/work",
                "env": [
                    {"name": "HOME", "value": "/tmp"},
                    {
                        "name": "ANTHROPIC_API_KEY",
                        "valueFrom": {
                            "secretKeyRef": {"name": "agent-secrets", "key": "ANTHROPIC_API_KEY"}
                        },
                    },
                    {"name": "LOG_LEVEL", "value": "info"},
                ],
                "securityContext": {
                    "runAsNonRoot": True,
                    "runAsUser": 10001,
                    "runAsGroup": 10001,
                    "allowPrivilegeEscalation": False,
                    "privileged": False,
                    "readOnlyRootFilesystem": True,
                    "capabilities": {"drop": ["ALL"]},
                },
                "resources": {"limits": {"memory": "1Gi"}},
                "volumeMounts": [
                    {"name": "work", "mountPath": "/work"},
                    {"name": "tmp", "mountPath": "/tmp"},
                    {"name": "data-0", "mountPath": "/data", "readOnly": True},
                    {"name": "agent-cache", "mountPath": "/cache", "readOnly": False},
                ],
            }
        ],
        "volumes": [
            {"name": "work", "emptyDir": {"medium": "Memory", "sizeLimit": "64Mi"}},
            {"name": "tmp", "emptyDir": {"medium": "Memory", "sizeLimit": "64Mi"}},
            {
                "name": "data-0",
                "persistentVolumeClaim": {"claimName": "agent-data-0", "readOnly": True},
            },
            {
                "name": "agent-cache",
                "persistentVolumeClaim": {"claimName": "agent-cache", "readOnly": False},
            },
        ],
    }
    docs = list(yaml.safe_load_all(render_kubernetes(spec, header=[])))
    assert [d["kind"] for d in docs] == ["Pod", "NetworkPolicy"]
    assert docs[1]["spec"] == {
        "podSelector": {"matchLabels": {"app.kubernetes.io/name": "agent"}},
        "policyTypes": ["Ingress", "Egress"],
        "ingress": [],
        "egress": [],
    }
    assert [quantity(q) for q in ("1g", "512m", "64k", "100")] == ["1Gi", "512Mi", "64Ki", "100"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"user": "0:0"}, "--user '0:0': uid and gid 0 are root; pick another"),
        ({"user": "10001:0"}, "--user '10001:0': uid and gid 0 are root; pick another"),
        ({"user": "agent"}, "--user 'agent': give a numeric UID[:GID] (a name cannot be checked "
         "for root, and Kubernetes' runAsUser needs a number)"),
        ({"workdir": "/"}, "--workdir '/': give an absolute path other than /"),
        ({"workdir": "work"}, "--workdir 'work': give an absolute path other than /"),
        ({"memory": "lots"}, "--memory 'lots': expected a size such as 512m or 1g"),
        ({"pids": 0}, "--pids 0: expected a positive number"),
        ({"network": "host"}, "--network 'host': expected `none` or the name of a network (not "
         "`host`: it shares the host's network namespace)"),
        ({"allow_mounts": (AllowedMount("/srv/project", "/work/project"),)},
         "--allow-mount /srv/project:/work/project: /work/project is inside the working "
         "directory /work; mount it elsewhere so the working directory stays empty"),
        ({"allow_mounts": (AllowedMount("/srv/project", "/"),)},
         "--allow-mount /srv/project:/: / is above the working directory /work; mount it "
         "elsewhere so the working directory stays empty"),
    ],
)  # fmt: skip
def test_options_that_would_undo_the_hardening_are_refused(
    change: dict[str, Any], message: str
) -> None:
    with pytest.raises(OptionError) as exc:
        validate_options(HardenOptions(target="x", **change))
    assert str(exc.value) == message


def test_a_uid_alone_gets_its_own_group_and_allow_mount_needs_two_paths() -> None:
    assert validate_options(HardenOptions(target="x", user="2000")).user == "2000:2000"
    assert parse_allow_mount("/srv/in:/data/") == AllowedMount("/srv/in", "/data")
    with pytest.raises(OptionError):
        parse_allow_mount("/srv/in")
    with pytest.raises(OptionError):
        parse_allow_mount("/srv/in:data")


def test_secret_values_are_dropped_at_first_sight() -> None:
    assert env_vars(
        [
            ("OPENAI_API_KEY", "sk-proj-0123456789abcdefghijklmnop"),
            ("LOG_LEVEL", "debug"),
            ("GITHUB_TOKEN", None),
            ("PATH", "/usr/bin"),
            ("DB_URL", "postgres://u:hunter2@db/x"),
        ]
    ) == (
        EnvVar("OPENAI_API_KEY"),
        EnvVar("LOG_LEVEL", "debug"),
        EnvVar("GITHUB_TOKEN"),
        EnvVar("DB_URL"),  # a URL with a password in it is a secret too
    )


def test_relative_script_paths_follow_the_code_out_of_the_working_directory() -> None:
    assert rewrite_relative(("python", "bot.py", "--v"), "/app") == (
        ("python", "/app/bot.py", "--v"),
        ["bot.py -> /app/bot.py"],
    )
    assert rewrite_relative(("./run.sh",), "/app") == (
        ("/app/run.sh",),
        ["./run.sh -> /app/run.sh"],
    )
    assert rewrite_relative(("python", "-m", "bot"), "/app") == (("python", "-m", "bot"), [])
    svc = service_from_image(
        "bot", "bot:1", ImageConfig(user="", workdir="/app", cmd=("python", "-m", "kontext_bot"))
    )
    assert svc.env == (EnvVar("PYTHONPATH", "/app"),)
    assert svc.command is None  # the image's own command still runs


def test_a_compose_service_keeps_what_it_needs_and_says_what_it_dropped(tmp_path: Path) -> None:
    project = tmp_path / "project"
    body = {
        "build": ".",
        "working_dir": "/app",
        "command": ["python", "-m", "bot"],
        "volumes": [".:/app", "cache:/cache", "/var/run/docker.sock:/var/run/docker.sock"],
        "environment": {"ANTHROPIC_API_KEY": "sk-ant-api03-" + "Q" * 40, "MODE": "prod"},
        "privileged": True,
        "cap_add": ["NET_ADMIN"],
        "labels": {"team": "kontext"},
    }
    svc = service_from_compose(
        "bot",
        body,
        compose_dir=project,
        out_dir=tmp_path / "out",
        opts=OPTS,
        origin="compose.yaml service bot",
    )
    assert svc == ServiceSpec(
        name="bot",
        image=None,
        build={"context": "../project"},
        command=["python", "-m", "bot"],
        env=(EnvVar("ANTHROPIC_API_KEY"), EnvVar("MODE", "prod")),
        volumes=(NamedVolume("cache", "/cache", False),),
        passthrough={"labels": {"team": "kontext"}},
        origin="compose.yaml service bot",
        notes=(
            "dropped the bind mount . -> /app (a host folder or an anonymous mount; if the agent "
            "needs it, pass --allow-mount HOST:PATH with a PATH outside /work (mounted read-only))",
            "dropped the bind mount /var/run/docker.sock -> /var/run/docker.sock (a host folder "
            "or an anonymous mount; if the agent needs it, pass --allow-mount HOST:PATH with a "
            "PATH outside /work (mounted read-only))",
            "dropped: cap_add, privileged",
            "the working directory moves from /app to the empty /work: if the command uses paths "
            "relative to /app (`python -m pkg`, `node app.js`), make them absolute or set "
            "PYTHONPATH=/app",
        ),
        compose_form=True,
    )


def test_a_command_holding_a_secret_is_not_repeated(tmp_path: Path) -> None:
    body = {"image": "bot:1", "command": ["bot", "--token", "ghp_" + "a" * 36]}
    svc = service_from_compose(
        "bot", body, compose_dir=tmp_path, out_dir=tmp_path, opts=OPTS, origin="c"
    )
    assert svc.command is None
    assert svc.notes == ("command holds a literal secret: not repeated here; pass it at run time",)
