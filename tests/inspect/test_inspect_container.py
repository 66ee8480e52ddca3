"""`agentguard inspect CONTAINER` on the real engine: the runtime config (mounts, user,
privileges, namespaces) on top of the container's image. Whole findings."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentguard.rules.secret_values import value_fingerprint
from tests.inspect.engine_support import (
    Made,
    engine_socket,
    findings_of,
    inspect_cli,
    report_of,
    unique,
    write_tree,
)

pytestmark = pytest.mark.engine


@pytest.fixture()
def made(docker_client: Any) -> Iterator[Made]:
    m = Made(docker_client)
    yield m
    m.cleanup()


def _finding(
    rule: str,
    title: str,
    severity: str,
    message: str,
    where: dict[str, Any],
    evidence: dict[str, Any],
    fix: str,
    snippet: str | None = None,
    confidence: str = "high",
) -> dict[str, Any]:
    fix_json: dict[str, Any] = {"description": fix, "safe": False}
    if snippet is not None:
        fix_json["snippet"] = snippet
    return {
        "rule_id": rule,
        "title": title,
        "severity": severity,
        "confidence": confidence,
        "message": message,
        "locations": [where],
        "evidence": evidence,
        "fix": fix_json,
        "ambiguous": False,
        "suppressed": None,
    }


def test_container_with_project_mount_socket_root_and_privileges(
    made: Made, tmp_path: Path
) -> None:
    image = f"{unique('runtime')}:1"
    made.import_tar(image, {"bin/busybox": b"placeholder"}, ["USER 10001", "WORKDIR /work"])
    project = tmp_path / "project"
    write_tree(project, {"docs/plan.md": "# plan\n", ".git/HEAD": "ref: refs/heads/main\n"})
    socket = engine_socket()
    name = unique("agent")
    token = "xoxb-" + "7" * 24
    container = made.container(
        image,
        command="sh",
        name=name,
        working_dir="/app",
        user="root",
        volumes={
            str(project): {"bind": "/app", "mode": "rw"},
            socket: {"bind": "/var/run/docker.sock", "mode": "rw"},
        },
        cap_add=["NET_ADMIN"],
        privileged=True,
        pid_mode="host",
        ipc_mode="host",
        environment={"SLACK_BOT_TOKEN": token, "LOG_LEVEL": "debug"},
    )

    result = inspect_cli(name, "--no-lock", "--format", "json")

    assert result.exit_code == 1, result.stderr
    report = report_of(result)
    assert report["complete"] is True
    assert report["facts"]["target"] == {
        "text": name,
        "kind": "container",
        "how": "a container in the engine",
    }
    subject = f"container {name}"
    here = {"note": f"container {name} ({container.id[:12]})"}
    assert findings_of(report, "AG202", "AG203", "AG204") == [
        _finding(
            "AG203",
            "Docker socket mounted or present",
            "critical",
            f"{subject} mounts the Docker socket ({socket} -> /var/run/docker.sock): whoever reaches it is root on the host.",
            {"path": "/var/run/docker.sock", "note": f"{subject} mount of {socket}"},
            {
                "subject": subject,
                "source": socket,
                "destination": "/var/run/docker.sock",
                "read_write": True,
                "via_folder": False,
            },
            f"Remove the mount of {socket}; if the agent must run containers, give it a separate rootless engine or an API proxy that allows only the calls it needs.",
        ),
        _finding(
            "AG202",
            "Host folder mounted into the agent's working directory",
            "high",
            f"{subject} mounts the host folder {project} at the working directory /app (writable); the agent reads it as its project.",
            {"path": "/app", "note": f"{subject} mount of {project}"},
            {
                "subject": subject,
                "source": str(project),
                "destination": "/app",
                "workdir": "/app",
                "relation": "at",
                "read_write": True,
            },
            f"Do not mount {project} into the agent's working directory: mount only what the agent needs, read-only, outside it, or use a named volume as scratch space.",
            snippet="-v agent-scratch:/work -w /work",
        ),
    ]
    assert findings_of(report, "AG401", "AG402", "AG403", "AG404", "AG405", "AG406", "AG407") == [
        _finding(
            "AG402",
            "Literal secret in environment or build history",
            "critical",
            f"{subject} sets SLACK_BOT_TOKEN to a literal value in the container's environment (--env) (its value has a known key format: slack token); value redacted, sha256 prefix {value_fingerprint(token)}.",
            here,
            {
                "subject": subject,
                "variable": "SLACK_BOT_TOKEN",
                "set_where": "the container's environment (--env)",
                "detected_by": "slack-token",
                "value": "redacted",
                "value_sha256_prefix": value_fingerprint(token),
            },
            "Remove the literal SLACK_BOT_TOKEN from the container's environment (--env), pass it at run time from a secret store (`--env SLACK_BOT_TOKEN` passes the caller's value through), and rotate it: anyone who can read the image or the config has it.",
            snippet="--env SLACK_BOT_TOKEN",
        ),
        _finding(
            "AG403",
            "Privileged container",
            "critical",
            f"{subject} runs privileged: every capability and every host device.",
            here,
            {"subject": subject, "privileged": True},
            "Remove `--privileged` (`privileged: true`); add one reviewed capability instead.",
        ),
        _finding(
            "AG404",
            "Added capabilities",
            "high",
            f"{subject} is given the capability NET_ADMIN, a known way to reach the host or its network.",
            here,
            {"subject": subject, "capability": "NET_ADMIN", "known_escape": True},
            "Remove `--cap-add NET_ADMIN` (`cap_add: [NET_ADMIN]`) and run with `--cap-drop ALL`.",
            snippet="--cap-drop ALL",
        ),
        *(
            _finding(
                "AG405",
                "Host network, PID or IPC namespace",
                "high",
                f"{subject} shares the host's {ns} namespace ({ns} mode host).",
                here,
                {"subject": subject, "namespace": ns, "mode": "host"},
                f"Remove `--{ns} host` (`{ns}_mode: host`); use the container's own {ns} namespace.",
            )
            for ns in ("ipc", "pid")
        ),
        _finding(
            "AG401",
            "Runs as root",
            "medium",
            f"{subject} runs as root (user root, from the container's --user).",
            here,
            {"subject": subject, "user": "root", "set_where": "the container's --user"},
            'Create an unprivileged user and run as it: `USER 10001:10001` in the Dockerfile, or `--user 10001:10001` / `user: "10001:10001"` where the container is started.',
            snippet="USER 10001:10001",
        ),
        _finding(
            "AG406",
            "Root filesystem not read-only",
            "low",
            f"The root filesystem of {subject} is writable.",
            here,
            {"subject": subject, "read_only_rootfs": False},
            "Run with `--read-only` (`read_only: true`) and give the agent explicit scratch space: `--tmpfs /tmp` and a volume for its working directory.",
            snippet="--read-only --tmpfs /tmp",
        ),
        _finding(
            "AG407",
            "no-new-privileges not set",
            "low",
            f"{subject} does not set no-new-privileges.",
            here,
            {"subject": subject, "security_opt": ["label=disable"]},
            'Run with `--security-opt no-new-privileges` (`security_opt: ["no-new-privileges:true"]`).',
            snippet="--security-opt no-new-privileges",
        ),
    ]
    facts = report["facts"]["container"]
    assert facts["cap_add"] == ["NET_ADMIN"]
    assert sorted(facts["env_names"]) == ["LOG_LEVEL", "SLACK_BOT_TOKEN"]
    assert report["provenance"]["inputs"]["container_id"] == container.id
    assert token not in result.stdout


def test_hardened_container_has_no_runtime_findings(made: Made) -> None:
    image = f"{unique('hardened')}:1"
    made.import_tar(image, {"bin/busybox": b"placeholder"}, ["USER 10001", "WORKDIR /work"])
    name = unique("calm")
    made.container(
        image,
        command="sh",
        name=name,
        cap_drop=["ALL"],
        read_only=True,
        security_opt=["no-new-privileges"],
        network_mode="none",
    )
    result = inspect_cli(name, "--no-lock", "--format", "json")
    assert result.exit_code == 0, result.stdout
    report = report_of(result)
    assert report["complete"] is True
    assert report["findings"] == []
    assert report["facts"]["container"]["cap_drop"] == ["ALL"]
