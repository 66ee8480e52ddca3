"""Compose/devcontainer/Dockerfile uses of the shared AG20x/AG40x rules, as stories."""

from __future__ import annotations

from agentguard.engine import make_report
from agentguard.engine.project import scan_container_files
from agentguard.findings import Confidence, Finding, Fix, Location, Severity
from agentguard.inspect.facts import ProjectFile
from agentguard.report import Format, render


def run(files: dict[str, str]) -> list[Finding]:
    findings, sources, _ = scan_container_files(
        [ProjectFile(p, t.encode()) for p, t in files.items()]
    )
    assert all(s.status.value == "ok" for s in sources), sources
    return findings


def only(rule_id: str, findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.rule_id == rule_id]


def ag202(
    mounted: str,
    where: str,
    line: int,
    path: str,
    who: str,
    note: str | None = None,
    **evidence: object,
) -> Finding:
    return Finding(
        rule_id="AG202",
        title="Host folder mounted into the agent's working directory",
        severity=Severity.HIGH,
        confidence=Confidence.HIGH,
        message=f"{who} mounts the host folder {mounted} {where} (writable); "
        "the agent reads it as its project.",
        locations=(Location(path=path, line=line, note=note),),
        fix=Fix(
            f"Do not mount {mounted} into the agent's working directory: mount only what the "
            "agent needs, read-only, outside it, or use a named volume as scratch space.",
            snippet="-v agent-scratch:/work -w /work",
        ),
        evidence=evidence,
    )


def test_compose_dot_app_with_working_dir_app_mounts_the_checkout_as_the_project() -> None:
    compose = "services:\n  agent:\n    build: .\n    working_dir: /app\n    volumes: ['.:/app']\n"
    assert only("AG202", run({"compose.yaml": compose})) == [
        ag202(
            ".",
            "at the working directory /app",
            5,
            "compose.yaml",
            "compose service agent",
            subject="compose service agent",
            source=".",
            destination="/app",
            workdir="/app",
            relation="at",
            read_write=True,
            workdir_from="working_dir",
        )
    ]


def test_a_devcontainer_workspace_mount_into_the_workspace_folder() -> None:
    devcontainer = """{
  "image": "mcr.microsoft.com/devcontainers/python:3.12",
  /* the checkout becomes the agent's working folder */
  "workspaceMount": "source=${localWorkspaceFolder},target=/code,type=bind",
  "workspaceFolder": "/code",
}"""
    assert only("AG202", run({".devcontainer/devcontainer.json": devcontainer})) == [
        ag202(
            "${localWorkspaceFolder}",
            "at the working directory /code",
            4,
            ".devcontainer/devcontainer.json",
            "devcontainer .devcontainer/devcontainer.json",
            note="workspaceMount",
            subject="devcontainer .devcontainer/devcontainer.json",
            source="${localWorkspaceFolder}",
            destination="/code",
            workdir="/code",
            relation="at",
            read_write=True,
        )
    ]


def test_a_compose_service_opened_by_a_devcontainer_uses_its_workspace_folder() -> None:
    files = {
        ".devcontainer/devcontainer.json": '{"dockerComposeFile": ["../compose.yaml"], '
        '"service": "dev", "workspaceFolder": "/workspaces/bot"}',
        "compose.yaml": "services:\n  dev:\n    image: bot:1\n    volumes:\n"
        "      - ..:/workspaces:cached\n",
    }
    [finding] = only("AG202", run(files))
    assert finding.evidence["relation"] == "above"
    assert finding.evidence["workdir_from"] == "workspaceFolder in .devcontainer/devcontainer.json"
    assert finding.locations == (Location(path="compose.yaml", line=5),)


def test_unknown_working_directory_is_reported_with_low_confidence_not_dropped() -> None:
    compose = (
        "services:\n  agent:\n    build: ./bot\n"
        "    volumes: ['./bot:/srv/bot', './data/pg:/var/lib/postgresql/data']\n"
    )
    # the build context holds the project; a data folder is not what the agent reads
    [finding] = only("AG202", run({"compose.yaml": compose}))
    assert finding.evidence["source"] == "./bot"
    assert finding.confidence is Confidence.LOW
    assert finding.evidence["relation"] == "unknown"
    assert finding.evidence["workdir_from"] == "unknown (set by the image)"


def test_interpolated_privileged_is_unknown_not_false() -> None:
    compose = "services:\n  agent:\n    image: bot:1\n    privileged: ${PRIV}\n"
    [finding] = only("AG403", run({"compose.yaml": compose}))
    assert finding.confidence is Confidence.LOW
    assert finding.locations == (Location(path="compose.yaml", line=4),)


def test_literal_secrets_never_appear_in_any_output() -> None:
    secrets = [
        "sk-ant-api03-SECRETVALUE0123456789",
        "hunter2-db-pass",
        "xoxb-1234567890-SLACKSECRET",
    ]
    files = {
        "Dockerfile": f"FROM python:3.12-slim\nENV ANTHROPIC_API_KEY={secrets[0]}\nUSER 1\n",
        "compose.yaml": f"services:\n  db:\n    image: pg\n    environment:\n      - DB_PASSWORD={secrets[1]}\n",
        ".devcontainer/devcontainer.json": '{"image": "x", "containerEnv": {"SLACK_TOKEN": "'
        + secrets[2]
        + '"}}',
    }
    findings = run(files)
    assert sorted(f.evidence["variable"] for f in only("AG402", findings)) == [
        "ANTHROPIC_API_KEY",
        "DB_PASSWORD",
        "SLACK_TOKEN",
    ]
    report = make_report("inspect", findings, [])
    for fmt in Format:
        text = render(report, fmt, color=False, verbose=True)
        for secret in secrets:
            assert secret not in text
    for f in findings:
        assert all(secret not in repr(f) for secret in secrets)


def test_an_interpolated_user_is_unknown_not_unprivileged() -> None:
    compose = 'services:\n  agent:\n    image: bot:1\n    user: "${UID}:${GID}"\n'
    [finding] = only("AG401", run({"compose.yaml": compose}))
    assert finding.confidence is Confidence.LOW
    assert finding.evidence["user"] is None
    assert finding.locations == (Location(path="compose.yaml", line=4),)
