"""`agentguard map IMAGE`: the same picture from the image's layers, on the real engine.

The image is built FROM scratch (busybox for a shell); nothing is pulled. Its agent is a
pydantic-ai agent whose one tool, added by ``@agent.tool_plain``, runs a shell command:
the entry is compared whole (the agent where the image's CMD starts it, the image as its
runner, the image's working directory, the tool function with what its body runs).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from typer.testing import CliRunner

from agentguard.cli import app
from tests.inspect.engine_support import Made, unique, write_tree

pytestmark = pytest.mark.engine

ROOT = Path(__file__).resolve().parents[3]
MAP_SCHEMA = json.loads((ROOT / "agentguard" / "schemas" / "map-1.json").read_text())
AGENT = """\
import subprocess

from pydantic_ai import Agent

agent = Agent("openai:gpt-4o")


@agent.tool_plain
def run(cmd: str) -> str:
    return subprocess.run(cmd, shell=True, capture_output=True, text=True).stdout
"""
DOCKERFILE = """\
FROM scratch
COPY busybox /bin/busybox
COPY rootfs/ /
WORKDIR /opt/agent
CMD ["python3", "/opt/agent/agent.py"]
"""


@pytest.fixture()
def made(docker_client: Any) -> Iterator[Made]:
    m = Made(docker_client)
    yield m
    m.cleanup()


def _ev(path: str, line: int | None, note: str) -> dict[str, Any]:
    return {"path": path, "line": line, "note": note}


def test_map_of_an_image_draws_its_agent_and_the_tool_its_decorator_adds(
    made: Made, tmp_path: Path
) -> None:
    tag = unique("map") + ":1"
    context = tmp_path / "context"
    write_tree(context, {"rootfs/opt/agent/agent.py": AGENT})
    made.build(tag, context, DOCKERFILE)

    result = CliRunner().invoke(app, ["map", tag, "--format", "json", "--no-project-config"])
    assert result.exit_code == 0, result.stdout
    doc = json.loads(result.stdout)
    jsonschema.Draft202012Validator(MAP_SCHEMA).validate(doc)
    assert doc["complete"] is True
    assert doc["map"]["target"] == tag
    path = "/opt/agent/agent.py"
    assert doc["map"]["agents"] == [
        {
            "id": "agent-1",
            "site": {
                "kind": "definition",
                "engine": "pydantic-ai",
                "label": "Agent(...)",
                "evidence": [_ev(path, 5, "pydantic_ai.Agent")],
            },
            "runners": [
                {
                    "kind": "image",
                    "name": tag,
                    "how": "the image holds this file",
                    "image": None,
                    "dockerfile": None,
                    "triggers": [],
                    "open_triggers": None,
                    "confidence": "high",
                    "evidence": [_ev(path, None, "a file of the image")],
                }
            ],
            "runner_note": "",
            "workdir": {
                "path": "/opt/agent",
                "holds_kind": "image-content",
                "host_source": None,
                "holds": None,
                "how": "the image's files",
                "confidence": "medium",
                "evidence": [],
            },
            "tools": [
                {
                    "category": "declared",
                    "state": "unknown",
                    "tools": [],
                    "approval": "unknown",
                    "how": "no tools handed in the call; its decorators in this file add run "
                    "(tools added in other ways are not read)",
                    "confidence": "low",
                    "evidence": [_ev(path, 5, "pydantic_ai.Agent")],
                },
                {
                    "category": "function",
                    "state": "live",
                    "tools": ["run"],
                    "approval": "unknown",
                    "how": "@agent.tool_plain run: its body calls subprocess.run (shell, line 10)",
                    "confidence": "medium",
                    "evidence": [
                        _ev(path, 9, "@agent.tool_plain run"),
                        _ev(path, 10, "shell: subprocess.run"),
                    ],
                },
            ],
            "paths": [],
            "reach": {"network_mode": None, "web": "unknown", "confidence": "low", "evidence": []},
            "mcp_servers": [],
            "secrets": [],
            "model": {
                "primary": ["openai:gpt-4o"],
                "primary_state": "set",
                "evidence": [_ev(path, 5, "model = 'openai:gpt-4o'")],
                "fallbacks": [],
            },
            "hazards": [],
        }
    ]
