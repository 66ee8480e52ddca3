"""`agentguard map` draws a container whose own start runs an agent app (an agent service):
the compose service whose image's CMD serves OpenHands, one whose command starts aider, a
published OpenHands image, one whose image's name alone says so (low confidence), and the
image of a Dockerfile whose ENTRYPOINT is codex; a database service is not drawn. Each
entry is compared whole (its mounts, network, secrets by name; tools unknown)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from typer.testing import CliRunner

from agentguard.cli import app
from agentguard.findings import Confidence
from agentguard.inspect.project.agent_services import engines_started, image_engine

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "map_services"
MAP_SCHEMA = json.loads((ROOT / "agentguard" / "schemas" / "map-1.json").read_text())


@pytest.fixture()
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    dest = tmp_path / "p"
    shutil.copytree(FIXTURE, dest)
    monkeypatch.chdir(dest)
    return dest


def _map(target: str = ".") -> dict[str, Any]:
    result = CliRunner().invoke(app, ["map", target, "--format", "json", "--no-project-config"])
    assert result.exit_code == 0, result.stdout
    doc: dict[str, Any] = json.loads(result.stdout)
    jsonschema.Draft202012Validator(MAP_SCHEMA).validate(doc)
    return doc


EXPECTED = [
    {
        "id": "agent-1",
        "site": {
            "kind": "service",
            "engine": "OpenHands",
            "label": "agent service app (medium confidence: the image it builds from Dockerfile "
            "starts CMD uvicorn openhands.server.listen:app --host 0.0.0.0, handed to "
            "ENTRYPOINT /app/entrypoint.sh (what it does with it: not read) (line 5))",
            "evidence": [{"path": "compose.yaml", "line": 2, "note": "compose service app"}],
        },
        "runners": [
            {
                "kind": "compose-service",
                "name": "app",
                "how": "the image it builds from Dockerfile starts CMD uvicorn "
                "openhands.server.listen:app --host 0.0.0.0, handed to ENTRYPOINT "
                "/app/entrypoint.sh (what it does with it: not read) (line 5)",
                "image": None,
                "dockerfile": "Dockerfile",
                "triggers": [],
                "open_triggers": None,
                "confidence": "medium",
                "evidence": [
                    {"path": "compose.yaml", "line": 2, "note": "compose service app"},
                    {
                        "path": "Dockerfile",
                        "line": 5,
                        "note": "CMD uvicorn openhands.server.listen:app --host 0.0.0.0, "
                        "handed to ENTRYPOINT /app/entrypoint.sh (what it does with "
                        "it: not read)",
                    },
                ],
            }
        ],
        "runner_note": "",
        "workdir": {
            "path": "/app",
            "holds_kind": "unknown",
            "host_source": None,
            "holds": None,
            "how": "the container's working directory; what is there is not read (the image "
            "decides)",
            "confidence": "medium",
            "evidence": [
                {"path": "compose.yaml", "line": 2, "note": "WORKDIR in Dockerfile: /app"}
            ],
        },
        "tools": None,
        "paths": [
            {
                "kind": "bind",
                "source": "/var/run/docker.sock",
                "target": "/var/run/docker.sock",
                "writable": True,
                "sensitive": "docker socket",
                "confidence": "high",
                "evidence": [
                    {
                        "path": "compose.yaml",
                        "line": 5,
                        "note": "/var/run/docker.sock:/var/run/docker.sock",
                    }
                ],
            },
            {
                "kind": "bind",
                "source": "./workspace",
                "target": "/opt/workspace_base",
                "writable": True,
                "sensitive": None,
                "confidence": "high",
                "evidence": [
                    {"path": "compose.yaml", "line": 6, "note": "./workspace:/opt/workspace_base"}
                ],
            },
        ],
        "reach": {
            "network_mode": "default",
            "web": "unknown",
            "confidence": "high",
            "evidence": [
                {
                    "path": "compose.yaml",
                    "line": 2,
                    "note": "network_mode: not set (the default network)",
                }
            ],
        },
        "mcp_servers": [],
        "secrets": [
            {
                "name": "LLM_API_KEY",
                "via": "compose service app environment",
                "evidence": [{"path": "compose.yaml", "line": 8, "note": "LLM_API_KEY"}],
            }
        ],
        "model": {
            "primary": [],
            "primary_state": "unknown",
            "evidence": [{"path": "compose.yaml", "line": 2, "note": "compose service app"}],
            "fallbacks": [],
        },
        "hazards": [
            {
                "rule_id": "AG203",
                "text": "mounts docker socket",
                "evidence": [
                    {
                        "path": "compose.yaml",
                        "line": 5,
                        "note": "/var/run/docker.sock:/var/run/docker.sock",
                    }
                ],
            }
        ],
    },
    {
        "id": "agent-2",
        "site": {
            "kind": "service",
            "engine": "aider",
            "label": "agent service coder (its command starts aider --yes-always; its image "
            "paulgauthier/aider:v0.80 (an agent app's published image))",
            "evidence": [{"path": "compose.yaml", "line": 9, "note": "compose service coder"}],
        },
        "runners": [
            {
                "kind": "compose-service",
                "name": "coder",
                "how": "its command starts aider --yes-always; its image paulgauthier/aider:v0.80 "
                "(an agent app's published image)",
                "image": "paulgauthier/aider:v0.80",
                "dockerfile": None,
                "triggers": [],
                "open_triggers": None,
                "confidence": "high",
                "evidence": [
                    {"path": "compose.yaml", "line": 9, "note": "compose service coder"},
                    {"path": "compose.yaml", "line": 11, "note": "starts aider --yes-always"},
                    {"path": "compose.yaml", "line": 10, "note": "image: paulgauthier/aider:v0.80"},
                ],
            }
        ],
        "runner_note": "",
        "workdir": {
            "path": None,
            "holds_kind": "unknown",
            "host_source": None,
            "holds": None,
            "how": "the working directory is not set in the files (the image decides)",
            "confidence": "low",
            "evidence": [],
        },
        "tools": None,
        "paths": [],
        "reach": {
            "network_mode": "host",
            "web": "unknown",
            "confidence": "high",
            "evidence": [{"path": "compose.yaml", "line": 12, "note": "network_mode: host"}],
        },
        "mcp_servers": [],
        "secrets": [],
        "model": {
            "primary": [],
            "primary_state": "unknown",
            "evidence": [{"path": "compose.yaml", "line": 9, "note": "compose service coder"}],
            "fallbacks": [],
        },
        "hazards": [],
    },
    {
        "id": "agent-3",
        "site": {
            "kind": "service",
            "engine": "OpenHands",
            "label": "agent service hosted (medium confidence: its image "
            "docker.all-hands.dev/all-hands-ai/openhands:0.9 (an agent app's published "
            "image))",
            "evidence": [{"path": "compose.yaml", "line": 13, "note": "compose service hosted"}],
        },
        "runners": [
            {
                "kind": "compose-service",
                "name": "hosted",
                "how": "its image docker.all-hands.dev/all-hands-ai/openhands:0.9 (an agent app's "
                "published image)",
                "image": "docker.all-hands.dev/all-hands-ai/openhands:0.9",
                "dockerfile": None,
                "triggers": [],
                "open_triggers": None,
                "confidence": "medium",
                "evidence": [
                    {"path": "compose.yaml", "line": 13, "note": "compose service hosted"},
                    {
                        "path": "compose.yaml",
                        "line": 14,
                        "note": "image: docker.all-hands.dev/all-hands-ai/openhands:0.9",
                    },
                ],
            }
        ],
        "runner_note": "",
        "workdir": {
            "path": None,
            "holds_kind": "unknown",
            "host_source": None,
            "holds": None,
            "how": "the working directory is not set in the files (the image decides)",
            "confidence": "low",
            "evidence": [],
        },
        "tools": None,
        "paths": [],
        "reach": {
            "network_mode": "default",
            "web": "unknown",
            "confidence": "high",
            "evidence": [
                {
                    "path": "compose.yaml",
                    "line": 13,
                    "note": "network_mode: not set (the default network)",
                }
            ],
        },
        "mcp_servers": [],
        "secrets": [],
        "model": {
            "primary": [],
            "primary_state": "unknown",
            "evidence": [{"path": "compose.yaml", "line": 13, "note": "compose service hosted"}],
            "fallbacks": [],
        },
        "hazards": [],
    },
    {
        "id": "agent-4",
        "site": {
            "kind": "service",
            "engine": "OpenHands",
            "label": "agent service dev (low confidence: its image openhands:dev (only its name))",
            "evidence": [{"path": "compose.yaml", "line": 17, "note": "compose service dev"}],
        },
        "runners": [
            {
                "kind": "compose-service",
                "name": "dev",
                "how": "its image openhands:dev (only its name)",
                "image": "openhands:dev",
                "dockerfile": None,
                "triggers": [],
                "open_triggers": None,
                "confidence": "low",
                "evidence": [
                    {"path": "compose.yaml", "line": 17, "note": "compose service dev"},
                    {"path": "compose.yaml", "line": 18, "note": "image: openhands:dev"},
                ],
            }
        ],
        "runner_note": "",
        "workdir": {
            "path": None,
            "holds_kind": "unknown",
            "host_source": None,
            "holds": None,
            "how": "the working directory is not set in the files (the image decides)",
            "confidence": "low",
            "evidence": [],
        },
        "tools": None,
        "paths": [
            {
                "kind": "bind",
                "source": "~/.ssh",
                "target": "/root/.ssh",
                "writable": False,
                "sensitive": "credentials folder .ssh",
                "confidence": "high",
                "evidence": [{"path": "compose.yaml", "line": 20, "note": "~/.ssh:/root/.ssh:ro"}],
            }
        ],
        "reach": {
            "network_mode": "default",
            "web": "unknown",
            "confidence": "high",
            "evidence": [
                {
                    "path": "compose.yaml",
                    "line": 17,
                    "note": "network_mode: not set (the default network)",
                }
            ],
        },
        "mcp_servers": [],
        "secrets": [],
        "model": {
            "primary": [],
            "primary_state": "unknown",
            "evidence": [{"path": "compose.yaml", "line": 17, "note": "compose service dev"}],
            "fallbacks": [],
        },
        "hazards": [
            {
                "rule_id": "AG204",
                "text": "mounts credentials folder .ssh",
                "evidence": [{"path": "compose.yaml", "line": 20, "note": "~/.ssh:/root/.ssh:ro"}],
            }
        ],
    },
    {
        "id": "agent-5",
        "site": {
            "kind": "service",
            "engine": "Codex CLI",
            "label": "agent image (medium confidence: its image starts ENTRYPOINT codex (line 3; no "
            "compose service builds it))",
            "evidence": [{"path": "tools/Dockerfile", "line": 3, "note": "ENTRYPOINT codex"}],
        },
        "runners": [
            {
                "kind": "dockerfile",
                "name": "tools/Dockerfile",
                "how": "its image starts ENTRYPOINT codex (line 3; no compose service builds it)",
                "image": None,
                "dockerfile": "tools/Dockerfile",
                "triggers": [],
                "open_triggers": None,
                "confidence": "medium",
                "evidence": [{"path": "tools/Dockerfile", "line": 3, "note": "ENTRYPOINT codex"}],
            }
        ],
        "runner_note": "",
        "workdir": {
            "path": None,
            "holds_kind": "unknown",
            "host_source": None,
            "holds": None,
            "how": "the working directory is not set in the files (the image decides)",
            "confidence": "low",
            "evidence": [],
        },
        "tools": None,
        "paths": [],
        "reach": {"network_mode": None, "web": "unknown", "confidence": "low", "evidence": []},
        "mcp_servers": [],
        "secrets": [],
        "model": {
            "primary": [],
            "primary_state": "unknown",
            "evidence": [{"path": "tools/Dockerfile", "line": 3, "note": "ENTRYPOINT codex"}],
            "fallbacks": [],
        },
        "hazards": [],
    },
]


def test_agent_services_are_drawn_whole(project: Path) -> None:
    assert _map()["map"]["agents"] == EXPECTED


def test_a_service_whose_command_line_is_read_as_a_configuration_is_not_drawn_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "compose.yaml").write_text(
        "services:\n"
        "  reviewer:\n"
        "    image: node:22\n"
        '    command: claude --dangerously-skip-permissions -p "review"\n'
    )
    monkeypatch.chdir(tmp_path)
    agents = _map()["map"]["agents"]
    assert [(a["site"]["kind"], a["site"]["evidence"][0]["line"]) for a in agents] == [("cli", 4)]


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        (["uvicorn", "openhands.server.listen:app", "--port", "3000"], "OpenHands"),
        (["python3 -m openhands.core.main -t hi && echo done"], "OpenHands"),
        (['sh -c "exec npx -y @anthropic-ai/claude-code@1.0 -p hi"'], "claude CLI"),
        (["bash", "-c", "FOO=1 exec gemini --yolo"], "Gemini CLI"),
        (["pipx", "run", "aider-chat", "--yes"], "aider"),
        (["uvx", "--from", "x", "openhands"], "OpenHands"),
    ],
)
def test_an_engine_started_in_command_position_is_found(words: list[str], expected: str) -> None:
    assert [engine for engine, _text in engines_started(words)] == [expected]


@pytest.mark.parametrize(
    "words",
    [
        ["bash"],
        ["/app/entrypoint.sh"],
        ["echo", "claude"],  # an argument, not a command
        ["uvicorn", "myapp.server:app"],
        ["python", "-m", "http.server"],
        ["grep", "-r", "codex", "."],
    ],
)
def test_a_command_that_starts_no_engine_says_nothing(words: list[str]) -> None:
    assert engines_started(words) == []


def test_images_named_by_an_agent_app() -> None:
    assert image_engine("ghcr.io/all-hands-ai/openhands:0.9@sha256:ab") == (
        "OpenHands",
        Confidence.MEDIUM,
    )
    assert image_engine("docker.io/paulgauthier/aider-full") == ("aider", Confidence.MEDIUM)
    assert image_engine("registry.example/team/openhands:dev") == ("OpenHands", Confidence.LOW)
    # a sandbox runtime, an interpolated reference, an unrelated image: none
    assert image_engine("docker.openhands.dev/openhands/runtime:0.62-nikolaik") is None
    assert image_engine("${IMAGE:-ghcr.io/all-hands-ai/openhands:0.9}") is None
    assert image_engine("postgres:16") is None
