"""Compose files read into frozen service facts (also the input of the `harden` work)."""

from __future__ import annotations

import pytest

from agentguard.engine.project import scan_container_files
from agentguard.findings import Source
from agentguard.inspect.facts import ProjectFile
from agentguard.inspect.project.compose_facts import (
    ComposeEnv,
    ComposeService,
    ComposeVolume,
    parse_short_volume,
    read_compose,
)
from agentguard.inspect.project.lined import DocumentError

COMPOSE = """\
x-hardening: &hardening
  read_only: true
  security_opt: ["no-new-privileges:true"]
services:
  agent:
    <<: *hardening
    build:
      context: ./agent
      dockerfile: agent.Dockerfile
    working_dir: /work
    user: "10001:10001"
    volumes:
      - .:/work
      - type: bind
        source: ./config
        target: /etc/agent
        read_only: true
      - scratch:/tmp/scratch
      - /data
    environment:
      - ANTHROPIC_API_KEY
      - LOG_LEVEL=debug
    cap_add: [NET_BIND_SERVICE]
    network_mode: bridge
    pid: host
    ipc: private
    command: ["sh", "-c", "pip install -r requirements.txt && python -m agent"]
volumes:
  scratch: {}
"""


def test_services_become_frozen_facts_with_lines() -> None:
    cf = read_compose("compose.yaml", COMPOSE)
    assert cf.schema_errors == ()
    assert cf.services == (
        ComposeService(
            name="agent",
            line=5,
            image=None,
            build_context="./agent",
            build_dockerfile="agent.Dockerfile",
            working_dir="/work",
            user="10001:10001",
            volumes=(
                ComposeVolume("bind", ".", "/work", False, 13, ".:/work"),
                ComposeVolume("bind", "./config", "/etc/agent", True, 14),
                ComposeVolume(
                    "volume", "scratch", "/tmp/scratch", False, 18, "scratch:/tmp/scratch"
                ),
                ComposeVolume("volume", None, "/data", False, 19, "/data"),
            ),
            environment=(
                ComposeEnv("ANTHROPIC_API_KEY", None, 21),
                ComposeEnv("LOG_LEVEL", "debug", 22),
            ),
            cap_add=("NET_BIND_SERVICE",),
            cap_drop=(),
            privileged=False,
            network_mode="bridge",
            pid="host",
            ipc="private",
            read_only=True,
            security_opt=("no-new-privileges:true",),
            command="pip install -r requirements.txt && python -m agent",
            field_lines=(
                ("build", 7),
                ("working_dir", 10),
                ("user", 11),
                ("volumes", 12),
                ("environment", 20),
                ("cap_add", 23),
                ("network_mode", 24),
                ("pid", 25),
                ("ipc", 26),
                ("command", 27),
                ("read_only", 2),
                ("security_opt", 3),
            ),
        ),
    )
    assert cf.services[0].environment_names == ("ANTHROPIC_API_KEY", "LOG_LEVEL")


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (".:/app", ("bind", ".", "/app", False)),
        ("./src:/app/src:ro", ("bind", "./src", "/app/src", True)),
        ("~/.ssh:/root/.ssh:ro,z", ("bind", "~/.ssh", "/root/.ssh", True)),
        ("${PWD}:/app", ("bind", "${PWD}", "/app", False)),
        ("${SRC:-./src}:/app:${MODE}", ("bind", "${SRC:-./src}", "/app", None)),
        ("data:/var/lib/data", ("volume", "data", "/var/lib/data", False)),
        ("/cache", ("volume", None, "/cache", False)),
        ("C:\\work:/app", ("bind", "C:\\work", "/app", False)),
    ],
)
def test_short_volume_syntax(spec: str, expected: tuple[object, ...]) -> None:
    assert parse_short_volume(spec) == expected


def failed_sources(text: str) -> list[Source]:
    _, sources, _ = scan_container_files([ProjectFile("compose.yaml", text.encode())])
    return [s for s in sources if s.status.value == "failed"]


def test_an_alias_bomb_is_a_failed_source_not_a_hang() -> None:
    lines = ['a: &a ["x","x","x","x","x","x","x","x","x","x"]']
    for i in range(1, 9):
        prev = chr(ord("a") + i - 1)
        cur = chr(ord("a") + i)
        lines.append(f"{cur}: &{cur} [{', '.join(['*' + prev] * 10)}]")
    lines.append("services: {}")
    [source] = failed_sources("\n".join(lines))
    assert source.error_code == "compose-too-large"
    assert "alias bomb" in (source.reason or "")


def test_duplicate_keys_are_not_resolved_by_taking_one() -> None:
    [source] = failed_sources("services:\n  a:\n    image: x\n    image: y\n")
    assert source.error_code == "compose-duplicate-key"
    assert source.reason == "duplicate key 'image' (line 4)"


def test_schema_errors_are_a_failed_source_with_path_and_line_and_rules_still_run() -> None:
    text = "services:\n  agent:\n    image: bot:1\n    privileged: true\n    volumes: 7\n"
    findings, sources, _ = scan_container_files([ProjectFile("compose.yaml", text.encode())])
    [source] = sources
    assert source.status.value == "failed"
    assert source.error_code == "compose-schema-invalid"
    assert source.reason == (
        "does not match the Compose Specification: services.agent.volumes (line 5): "
        "7 is not of type 'array'"
    )
    assert "AG403" in {f.rule_id for f in findings}


def test_not_yaml_is_a_failed_source_with_its_line() -> None:
    [source] = failed_sources("services:\n  agent: [unclosed\n")
    assert source.error_code == "compose-syntax"
    assert source.reason is not None and "(line 3)" in source.reason


def test_top_level_must_be_a_mapping() -> None:
    with pytest.raises(DocumentError):
        read_compose("compose.yaml", "- a\n- b\n")
