"""`agentguard map` draws the agents a framework's constructor defines with no shell, file
or web tool: each entry compared whole, on files modelled on the field's (pydantic-ai's
examples, the gemini-fullstack LangGraph graph, crewAI's project template, browser-use's
sandbox example, aider's main), joined to the container that copies them; the findings do
not change, and a file that names no agent class is not parsed for one."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from typer.testing import CliRunner

from agentguard.cli import app
from agentguard.inspect.project.files import (
    process_file,
    python_may_matter,
    python_risk_may_matter,
)
from agentguard.inspect.project.python_agents import Wanted, analyse_python

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "definitions"
MAP_SCHEMA = json.loads((ROOT / "agentguard" / "schemas" / "map-1.json").read_text())


@pytest.fixture()
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    dest = tmp_path / "p"
    shutil.copytree(FIXTURE, dest)
    monkeypatch.chdir(tmp_path)
    return dest


def _map(target: str) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["map", target, "--format", "json"])
    assert result.exit_code == 0, result.stdout
    doc: dict[str, Any] = json.loads(result.stdout)
    jsonschema.Draft202012Validator(MAP_SCHEMA).validate(doc)
    return doc


def _ev(path: str, line: int, note: str) -> dict[str, Any]:
    return {"path": path, "line": line, "note": note}


_IN_API = {  # app/ is what the Dockerfile copies: compose service `api` builds it
    "runners": [
        {
            "kind": "compose-service",
            "name": "api",
            "how": "builds Dockerfile, which copies {file}",
            "image": None,
            "dockerfile": "Dockerfile",
            "triggers": [],
            "open_triggers": None,
            "confidence": "high",
            "evidence": [
                _ev("compose.yaml", 2, "compose service api"),
                _ev("Dockerfile", 3, "COPY to /srv/app/"),
            ],
        }
    ],
    "runner_note": "",
    "workdir": {
        "path": "/srv",
        "holds_kind": "unknown",
        "host_source": None,
        "holds": [],
        "how": "what is there is not read (the image decides)",
        "confidence": "medium",
        "evidence": [_ev("compose.yaml", 2, "WORKDIR in Dockerfile: /srv")],
    },
    "paths": [
        {
            "kind": "copy",
            "source": "app/",
            "target": "/srv/app",
            "writable": None,
            "sensitive": None,
            "confidence": "high",
            "evidence": [_ev("Dockerfile", 3, "COPY")],
        }
    ],
    "reach": {
        "network_mode": "default",
        "web": "unknown",
        "confidence": "high",
        "evidence": [_ev("compose.yaml", 2, "network_mode: not set (the default network)")],
    },
    "secrets": [
        {
            "name": "OPENAI_API_KEY",
            "via": "compose service api environment",
            "evidence": [_ev("compose.yaml", 5, "OPENAI_API_KEY")],
        }
    ],
}
_NO_CONTAINER = {
    "runners": [],
    "runner_note": "no Dockerfile copies this file and no compose service mounts it: it runs "
    "where its process is started (not read)",
    "workdir": {
        "path": ".",
        "holds_kind": "project",
        "host_source": None,
        "holds": [],
        "how": "the process's working directory: usually the checkout",
        "confidence": "low",
        "evidence": [],
    },
    "paths": [],
    "reach": {"network_mode": None, "web": "unknown", "confidence": "low", "evidence": []},
    "secrets": [],
}


def _entry(
    n: int,
    framework: str,
    label: str,
    path: str,
    line: int,
    callee: str,
    how: str,
    confidence: str,
    model: tuple[list[str], str, str],
    *,
    tools: list[str] | None = None,
) -> dict[str, Any]:
    site_ev = _ev(path, line, callee)
    where: dict[str, Any] = json.loads(
        json.dumps(_IN_API if path.startswith("app/") else _NO_CONTAINER).replace("{file}", path)
    )
    primary, state, note = model
    return {
        "id": f"agent-{n}",
        "site": {"kind": "definition", "engine": framework, "label": label, "evidence": [site_ev]},
        **{k: where[k] for k in ("runners", "runner_note", "workdir")},
        "tools": [
            {
                "category": "declared",
                "state": "unknown",
                "tools": tools or [],
                "approval": "unknown",
                "how": how,
                "confidence": confidence,
                "evidence": [site_ev],
            }
        ],
        "paths": where["paths"],
        "reach": where["reach"],
        "mcp_servers": [],
        "secrets": where["secrets"],
        "model": {
            "primary": primary,
            "primary_state": state,
            "evidence": [_ev(path, line, note)],
            "fallbacks": [],
        },
        "hazards": [],
    }


def _crew() -> dict[str, Any]:
    """Two definitions of one file: one entry, a tools row for each, with its line."""
    entry = _entry(
        7, "crewai", "Agent(...), Crew(...)", "src/crew/crew.py", 10, "crewai.Agent",
        f"Agent(...) at line 10: {_NOT_HANDED}", "low", ([], "unknown", "no model given"),
    )  # fmt: skip
    crew_ev = _ev("src/crew/crew.py", 17, "crewai.Crew")
    entry["tools"].append(
        {
            "category": "declared",
            "state": "unknown",
            "tools": [],
            "approval": "unknown",
            "how": f"Crew(...) at line 17: {_FRAMEWORKS}; it runs the agents it is given",
            "confidence": "low",
            "evidence": [crew_ev],
        }
    )
    entry["model"]["evidence"].append(_ev("src/crew/crew.py", 17, "no model given"))
    return entry


_NOT_HANDED = "no tools handed here (tools added in other ways are not read)"
_FRAMEWORKS = "what it can do is its framework's (not read)"


def test_agents_without_risky_tools_are_drawn_whole(project: Path) -> None:
    agents = _map("p")["map"]["agents"]
    assert agents == [
        _entry(
            1, "browser-use", "Agent(...)", "app/browse.py", 7, "browser_use.agent.service.Agent",
            f"{_NOT_HANDED}; it drives a web browser by itself (its own actions open pages, "
            "click and type)", "low",
            (["bu-latest"], "set", "model = ChatBrowserUse(model='bu-latest')"),
        ),
        _entry(
            2, "langgraph", "StateGraph(...).compile()", "app/graph.py", 7,
            "langgraph.graph.StateGraph", f"{_FRAMEWORKS}; it runs the nodes of its graph", "low",
            ([], "unknown", "no model given"),
        ),
        _entry(
            3, "aider", "Coder.create(...)", "app/main.py", 6, "aider.coders.Coder.create",
            f"{_FRAMEWORKS}; it edits the files it is handed, and runs the shell commands it "
            "suggests once confirmed", "low",
            ([], "unknown", "model = main_model"),
        ),
        _entry(
            4, "openai-agents", "Agent(...)", "app/weather.py", 8, "agents.Agent",
            "tools as written: get_weather", "medium",
            ([], "unknown", "no model given"), tools=["get_weather"],
        ),
        _entry(
            5, "pydantic-ai", "Agent(...)", "app/whales.py", 4, "pydantic_ai.Agent", _NOT_HANDED,
            "low", (["openai:gpt-5.2"], "set", "model = 'openai:gpt-5.2'"),
        ),
        _entry(
            6, "langgraph", "create_react_agent(...)", "src/crew/agent.py", 6,
            "langgraph.prebuilt.chat_agent_executor.create_react_agent",
            "tools = make_tools(): computed, not read",
            "low", (["anthropic:claude-3-7-sonnet-latest"], "set",
                    "model = 'anthropic:claude-3-7-sonnet-latest'"),
        ),
        _crew(),
    ]  # fmt: skip


def test_the_text_says_no_risky_tool_seen_never_none(project: Path) -> None:
    result = CliRunner().invoke(app, ["map", "p"], env={"NO_COLOR": "1"})
    assert (
        "agent-5: The agent in app/whales.py:4 (pydantic-ai), running in compose service api, "
        "from the image built by Dockerfile, works in /srv (what is there: unknown); no shell, "
        "file or web tool seen.\n"
        "  defined   Agent(...)  [app/whales.py:4]\n"
        "  runs in   compose service api, from the image built by Dockerfile  "
        "[compose.yaml:2, Dockerfile:3]\n"
        "  works in  /srv (what is there: unknown) (medium confidence)  [compose.yaml:2]\n"
        "  tools     no built-in shell/file/web tool seen; no tools handed here (tools added in other "
        "ways are not read) (low confidence)  [app/whales.py:4]\n"
    ) in result.stdout
    assert "no built-in tools" not in result.stdout


def test_the_definitions_change_no_finding(project: Path) -> None:
    def findings() -> list[Any]:
        result = CliRunner().invoke(app, ["inspect", "p", "--format", "json"])
        return list(json.loads(result.stdout)["findings"])

    with_defs = findings()
    for f in (project / "app").glob("*.py"):
        f.unlink()
    for f in (project / "src" / "crew").glob("*.py"):
        f.unlink()
    assert with_defs == findings()


def test_a_file_with_a_risky_grant_is_one_agent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "bot.py").write_text(
        "from agents import Agent, ShellTool\n"
        "agent = Agent(name='Shell', tools=[ShellTool(executor=run)])\n"
    )
    monkeypatch.chdir(tmp_path)
    agents = _map("p")["map"]["agents"]
    assert [(a["site"]["kind"], a["site"]["engine"], a["site"]["label"]) for a in agents] == [
        ("framework", "openai-agents", "openai-agents tools")
    ]


def test_a_bare_or_foreign_agent_name_is_no_definition() -> None:
    foreign = (
        b"from myapp.agents import Agent\n"
        b"from langgraph.graph import START\n"
        b"Agent('x')\n"
        b"def f(Crew):\n"
        b"    return Crew(agents=[])\n"
    )
    assert analyse_python("a.py", foreign).definitions == []


def test_a_file_naming_no_agent_class_is_not_parsed_for_one() -> None:
    data = b"from browser_use import Browser\nbrowser = Browser()\n"
    assert Wanted.of(data) == Wanted(False, False, False, False, False, False, False)
    assert analyse_python("a.py", data).parsed is False
    # a framework only the map reads is parsed for its definitions alone, not by the others
    defines = (
        b"from aider.coders import Coder\ntry:\n    Coder.create()\nexcept E:\n    model = 'b'\n"
    )
    assert python_may_matter(defines) and not python_risk_may_matter(defines)
    wanted = Wanted.of(defines, risk_readers=False)
    assert wanted == Wanted(False, False, False, False, False, False, True)
    outcome = process_file("a.py", "python", defines)
    assert outcome.fallbacks == [] and [d.label for d in outcome.definitions] == [
        "Coder.create(...)"
    ]


def test_a_file_of_many_agents_is_one_entry_and_the_cap_is_a_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file of many agents (pydantic-ai's tests/test_agent.py defines 364 with
    `Agent(TestModel())`; here one outside a test suite)."""
    (tmp_path / "p").mkdir()
    calls = "".join(f"a{i} = Agent(TestModel())\n" for i in range(203))
    (tmp_path / "p" / "many_agents.py").write_text(
        f"from pydantic_ai import Agent\nfrom pydantic_ai.models.test import TestModel\n{calls}"
    )
    monkeypatch.chdir(tmp_path)
    doc = _map("p")
    assert doc["complete"] is True  # the file was read whole: only the drawing is cut
    (agent,) = doc["map"]["agents"]
    assert agent["site"]["label"] == "Agent(...) x200"
    rows = agent["tools"]
    assert [r["how"] for r in rows[:2]] == [
        f"Agent(...) at line {n}: no tools handed here (tools added in other ways are not read)"
        for n in (3, 4)
    ]
    assert len(rows) == 11
    assert rows[10]["how"] == "190 more definitions in this file, not drawn one by one"
    assert [e["line"] for e in rows[10]["evidence"]] == list(range(13, 203))
    assert agent["model"]["primary_state"] == "unknown"
    assert doc["map"]["notes"] == ["many_agents.py defines 203 agents: only the first 200 are read"]


def test_plain_agents_in_a_test_suite_are_not_drawn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A test suite's agents without a risky tool are its fixtures, not agents anyone runs:
    not drawn (and a test file is not parsed for them alone: on pydantic-ai, 3,187 of 3,230
    definitions were in tests, the parsing +25% of inspect's CPU)."""
    (tmp_path / "p" / "tests").mkdir(parents=True)
    text = "from pydantic_ai import Agent\nfrom pydantic_ai.models.test import TestModel\n"
    (tmp_path / "p" / "tests" / "test_agent.py").write_text(text + "a = Agent(TestModel())\n")
    (tmp_path / "p" / "bot.py").write_text(text + "b = Agent(TestModel())\n")
    monkeypatch.chdir(tmp_path)
    doc = _map("p")
    sites = [a["site"] for a in doc["map"]["agents"]]
    assert [[e["path"] for e in s["evidence"]] for s in sites] == [["bot.py"]]


@pytest.mark.parametrize(
    "code",
    [
        b"from crewai import Agent as A\nA(role='r')\n",
        b"import crewai\nA = crewai.Agent\nA(role='r')\n",
        b"import pydantic_ai\npydantic_ai.Agent('m')\n",
        b"from aider.coders import Coder\nC = Coder\nC.create(main_model=m)\n",
        b"from autogen_agentchat.agents import AssistantAgent\nAssistantAgent (\n 'a', c)\n",
        b"from langgraph.graph import StateGraph\ng = StateGraph(S)\ng.compile()\n",
    ],
)
def test_the_byte_condition_keeps_every_shape_the_reader_resolves(code: bytes) -> None:
    full = analyse_python("a.py", code, wanted=Wanted.every(code)).definitions
    assert len(full) == 1
    assert analyse_python("a.py", code).definitions == full


def test_a_composite_action_that_runs_codex_through_its_script_is_drawn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """openai/codex-action's action.yml installs the Codex CLI and runs it from its own
    `dist/main.js`: no install command a rule reads, no `codex exec` line."""
    shutil.copytree(FIXTURE.parent / "definitions-action", tmp_path / "p")
    monkeypatch.chdir(tmp_path)
    expected = _entry(
        1, "@openai/codex", "composite action Codex Exec Action", "action.yml", 13,
        "composite action", f"{_FRAMEWORKS}; it is a composite action: it runs in the job of "
        "each workflow that uses it", "low", ([], "unknown", "no model given"),
    )  # fmt: skip
    assert _map("p")["map"]["agents"] == [expected]
