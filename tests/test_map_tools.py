"""`agentguard map` attaches the functions an agent is handed as tools: `@agent.tool` and
`@agent.tool_plain` onto a pydantic-ai agent (also one built as `Agent[Deps, Out](...)`),
`@function_tool`/`@tool`/plain functions named in `tools=[...]` (openai-agents,
smolagents), each with what its own body is seen to call (a rebound `open` is not the
builtin); and crewAI's agents.yaml, named by a `@CrewBase` class, read as hostile YAML.
Rows are compared whole."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from typer.testing import CliRunner

from agentguard.cli import app

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "map_tools"
MAP_SCHEMA = json.loads((ROOT / "agentguard" / "schemas" / "map-1.json").read_text())


@pytest.fixture()
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    dest = tmp_path / "p"
    shutil.copytree(FIXTURE, dest)
    monkeypatch.chdir(dest)
    return dest


def _map() -> dict[str, Any]:
    result = CliRunner().invoke(app, ["map", ".", "--format", "json", "--no-project-config"])
    assert result.exit_code in (0, 3), result.stdout
    doc: dict[str, Any] = json.loads(result.stdout)
    jsonschema.Draft202012Validator(MAP_SCHEMA).validate(doc)
    return doc


def _by_path(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {a["site"]["evidence"][0]["path"]: a for a in doc["map"]["agents"]}


PYD_TOOLS = [
    {
        "category": "declared",
        "state": "unknown",
        "tools": [],
        "approval": "unknown",
        "how": "Agent(...) at line 5: no tools handed in the call; its decorators in this file add run, "
        "roll (tools added in other ways are not read)",
        "confidence": "low",
        "evidence": [{"path": "pyd.py", "line": 5, "note": "pydantic_ai.Agent"}],
    },
    {
        "category": "function",
        "state": "live",
        "tools": ["run"],
        "approval": "unknown",
        "how": "@agent.tool run: its body calls subprocess.run (shell, line 10)",
        "confidence": "medium",
        "evidence": [
            {"path": "pyd.py", "line": 9, "note": "@agent.tool run"},
            {"path": "pyd.py", "line": 10, "note": "shell: subprocess.run"},
        ],
    },
    {
        "category": "function",
        "state": "unknown",
        "tools": ["roll"],
        "approval": "unknown",
        "how": "@agent.tool_plain roll: no shell, file or network call seen in its body (what it calls: "
        "unknown)",
        "confidence": "low",
        "evidence": [{"path": "pyd.py", "line": 14, "note": "@agent.tool_plain roll"}],
    },
    {
        "category": "declared",
        "state": "unknown",
        "tools": [],
        "approval": "unknown",
        "how": "Agent(...) at line 22: no tools handed in the call; its decorators in this file add read "
        "(tools added in other ways are not read)",
        "confidence": "low",
        "evidence": [{"path": "pyd.py", "line": 22, "note": "pydantic_ai.Agent"}],
    },
    {
        "category": "function",
        "state": "unknown",
        "tools": ["read"],
        "approval": "unknown",
        "how": "@other.tool_plain read: no shell, file or network call seen in its body (what it calls: "
        "unknown)",
        "confidence": "low",
        "evidence": [{"path": "pyd.py", "line": 26, "note": "@other.tool_plain read"}],
    },
]

OAI_TOOLS = [
    {
        "category": "declared",
        "state": "unknown",
        "tools": ["fetch", "helper"],
        "approval": "unknown",
        "how": "tools as written: fetch, helper",
        "confidence": "medium",
        "evidence": [{"path": "oai.py", "line": 14, "note": "agents.Agent"}],
    },
    {
        "category": "function",
        "state": "live",
        "tools": ["fetch"],
        "approval": "unknown",
        "how": "@function_tool fetch: its body calls requests.get (network, line 7)",
        "confidence": "medium",
        "evidence": [
            {"path": "oai.py", "line": 6, "note": "@function_tool fetch"},
            {"path": "oai.py", "line": 7, "note": "network: requests.get"},
        ],
    },
    {
        "category": "function",
        "state": "unknown",
        "tools": ["helper"],
        "approval": "unknown",
        "how": "function helper: no shell, file or network call seen in its body (what it calls: "
        "unknown)",
        "confidence": "low",
        "evidence": [{"path": "oai.py", "line": 10, "note": "function helper"}],
    },
]

SMOL_TOOLS = [
    {
        "category": "shell",
        "state": "live",
        "tools": ["CodeAgent (local executor)"],
        "approval": "pre-approved",
        "how": "no approval step read",
        "confidence": "high",
        "evidence": [
            {
                "path": "smol.py",
                "line": 14,
                "note": "runs model-written Python in this process; the import allow-list is not a "
                "sandbox",
            }
        ],
    },
    {
        "category": "function",
        "state": "live",
        "tools": ["save"],
        "approval": "unknown",
        "how": "@tool save: its body calls .write_text() (file, line 8), open (file, line 9)",
        "confidence": "medium",
        "evidence": [
            {"path": "smol.py", "line": 6, "note": "@tool save"},
            {"path": "smol.py", "line": 8, "note": "file: .write_text()"},
            {"path": "smol.py", "line": 9, "note": "file: open"},
        ],
    },
]

CREW_TOOLS = [
    {
        "category": "declared",
        "state": "unknown",
        "tools": ["search"],
        "approval": "unknown",
        "how": "researcher (agents.yaml) at line 1: tools as written: search; it acts as {topic} Senior "
        "Data Researcher; is built at src/demo/crew.py:16",
        "confidence": "medium",
        "evidence": [
            {"path": "src/demo/config/agents.yaml", "line": 1, "note": "crewai agents.yaml"}
        ],
    },
    {
        "category": "function",
        "state": "unknown",
        "tools": ["search"],
        "approval": "unknown",
        "how": "@tool method search: no shell, file or network call seen in its body (what it calls: "
        "unknown)",
        "confidence": "low",
        "evidence": [{"path": "src/demo/crew.py", "line": 11, "note": "@tool method search"}],
    },
    {
        "category": "declared",
        "state": "unknown",
        "tools": ["SerperDevTool()"],
        "approval": "unknown",
        "how": "coder (agents.yaml) at line 9: tools as written: SerperDevTool(); it acts as Python "
        "coder; runs the code it writes on this machine (allow_code_execution: true); is built at "
        "src/demo/crew.py:20",
        "confidence": "medium",
        "evidence": [
            {"path": "src/demo/config/agents.yaml", "line": 9, "note": "crewai agents.yaml"}
        ],
    },
]

CREW_SITE = {
    "kind": "definition",
    "engine": "crewai",
    "label": "researcher (agents.yaml), coder (agents.yaml)",
    "evidence": [{"path": "src/demo/config/agents.yaml", "line": 1, "note": "crewai agents.yaml"}],
}

CREW_MODEL = {
    "primary": [],
    "primary_state": "unknown",
    "evidence": [
        {"path": "src/demo/config/agents.yaml", "line": 1, "note": "model = llm: openai/gpt-4o"},
        {"path": "src/demo/config/agents.yaml", "line": 9, "note": "no model given"},
    ],
    "fallbacks": [],
}


def test_tool_functions_are_attached_to_their_agents(project: Path) -> None:
    agents = _by_path(_map())
    assert agents["pyd.py"]["tools"] == PYD_TOOLS
    assert agents["oai.py"]["tools"] == OAI_TOOLS
    # smolagents' CodeAgent is drawn with its risky tool: the tool function joins that entry
    assert agents["smol.py"]["site"]["kind"] == "framework"
    assert agents["smol.py"]["tools"] == SMOL_TOOLS


def test_crewai_agents_yaml_is_drawn_with_its_tools(project: Path) -> None:
    doc = _map()
    agents = _by_path(doc)
    crew = agents["src/demo/config/agents.yaml"]
    assert crew["site"] == CREW_SITE
    assert crew["tools"] == CREW_TOOLS
    assert crew["model"] == CREW_MODEL
    # the class's Agent(config=...) calls are those agents: crew.py keeps only its Crew(...)
    assert agents["src/demo/crew.py"]["site"]["label"] == "Crew(...)"
    assert {
        "kind": "file",
        "name": "src/demo/config/agents.yaml",
        "status": "ok",
        "reason": "crewAI agents of Demo: 2",
    } in doc["sources"]


BOMB = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{n}: &{n} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
    for p, n in zip("abcdefgh", "bcdefghi", strict=True)
)


@pytest.mark.parametrize(
    ("yaml_text", "status", "reason"),
    [
        (BOMB, "failed", "crewAI agents config: "),
        ("- just\n- a list\n", "failed", "crewAI agents config: not a mapping of agents"),
        (None, "skipped", "crewAI class Demo (src/demo/crew.py:7) names it: not found"),
    ],
)
def test_a_bad_or_missing_agents_yaml_is_a_source_that_says_so(
    project: Path, yaml_text: str | None, status: str, reason: str
) -> None:
    target = project / "src" / "demo" / "config" / "agents.yaml"
    if yaml_text is None:
        target.unlink()
    else:
        target.write_text(yaml_text)
    doc = _map()
    (source,) = [s for s in doc["sources"] if s["name"] == "src/demo/config/agents.yaml"]
    assert source["status"] == status
    assert source["reason"].startswith(reason), source["reason"]
    assert "src/demo/config/agents.yaml" not in _by_path(doc)
    # the class's own Agent(...) calls are still drawn, from its file
    assert _by_path(doc)["src/demo/crew.py"]["site"]["label"] == "Agent(...) x2, Crew(...)"


def test_an_agents_config_outside_the_project_is_not_read(project: Path) -> None:
    crew = project / "src" / "demo" / "crew.py"
    crew.write_text(
        crew.read_text().replace(
            '    """Demo crew"""\n',
            '    """Demo crew"""\n\n    agents_config = "../../../../x.yaml"\n',
        )
    )
    doc = _map()
    (source,) = [s for s in doc["sources"] if s["name"].startswith("src/demo/crew.py:")]
    assert source["status"] == "skipped"
    assert "outside the project" in source["reason"]
