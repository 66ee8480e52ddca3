"""`agentguard map` joins made across files, each entry compared whole:

- tools from other modules (``map_tool_imports``): ``@agent.tool_plain`` in
  ``app/shell_tools.py`` onto the ``agent`` it imports from ``app/agent.py``;
  ``tools=[search, read_notes]`` naming functions imported from a package that re-exports
  one and from a sibling module; ``from lib.fetch import fetch`` where both ``lib/`` and
  ``src/lib/`` hold it (both listed, none picked); ``@mcp.tool()`` onto an imported FastMCP
  server is not an agent's tool;
- Kubernetes agent containers (``map_k8s``): a Deployment whose ``sh -c`` starts
  ``npx @anthropic-ai/claude-code`` with the Docker socket, a hostPath working folder, a
  secret volume, ``secretKeyRef``/``envFrom`` secrets, privileged and ``hostNetwork``; a
  CronJob of aider's published image; a Job whose image a compose service builds here
  from a Dockerfile whose ENTRYPOINT is ``codex``; a database Pod (not drawn);
- the mis-join (``map_misjoin``): a ``claude`` command in compose service ``agent`` runs
  there, not in service ``web``, whose Dockerfile COPYs the folder holding compose.yaml;
- Claude Code's project settings and ``.mcp.json`` at the root (``map_settings``,
  modelled on PrefectHQ/fastmcp's and modelcontextprotocol/servers' files);
- a composite action's agent runs in each caller's job (PrefectHQ/fastmcp's run-claude).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from typer.testing import CliRunner

from agentguard.cli import app
from tests import mermaid_parser

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
MAP_SCHEMA = json.loads((ROOT / "agentguard" / "schemas" / "map-1.json").read_text())


def _map(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fixture: str) -> list[dict[str, Any]]:
    dest = tmp_path / "p"
    shutil.copytree(FIXTURES / fixture, dest)
    monkeypatch.chdir(dest)
    result = CliRunner().invoke(app, ["map", ".", "--format", "json", "--no-project-config"])
    assert result.exit_code == 0, result.stdout
    doc: dict[str, Any] = json.loads(result.stdout)
    jsonschema.Draft202012Validator(MAP_SCHEMA).validate(doc)
    agents: list[dict[str, Any]] = doc["map"]["agents"]
    return agents


def _expected(fixture: str) -> list[dict[str, Any]]:
    got: list[dict[str, Any]] = json.loads(
        (FIXTURES / "map_expected" / f"{fixture}.json").read_text()
    )
    return got


@pytest.mark.parametrize("fixture", ["map_tool_imports", "map_k8s", "map_misjoin", "map_settings"])
def test_entries_are_drawn_whole(
    fixture: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _map(tmp_path, monkeypatch, fixture) == _expected(fixture)


def _tool_rows(agent: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(t["tools"][0], t["evidence"][0]["path"], t["how"]) for t in agent["tools"]
            if t["category"] == "function"]  # fmt: skip


def test_tools_from_other_modules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    agents = {
        a["site"]["evidence"][0]["path"]: a for a in _map(tmp_path, monkeypatch, "map_tool_imports")
    }
    assert _tool_rows(agents["app/agent.py"]) == [
        ("run", "app/shell_tools.py",
         "@agent.tool_plain run: its body calls subprocess.run (shell, line 8)"),
        ("today", "app/shell_tools.py", "@agent.tool_plain today: no shell, file or network call "
         "seen in its body (what it calls: unknown)"),
    ]  # fmt: skip
    assert _tool_rows(agents["app/research.py"]) == [
        ("search", "app/tools/search.py",
         "@function_tool (imported) search: its body calls httpx.get (network, line 7)"),
        ("read_notes", "app/files.py",
         "function (imported) read_notes: its body calls open (file, line 2)"),
    ]  # fmt: skip
    assert _tool_rows(agents["crawler.py"]) == [  # two files: both, neither picked
        ("fetch", "lib/fetch.py",
         "function (imported; one of 2 files) fetch: its body calls requests.get (network, line 5)"),
        ("fetch", "src/lib/fetch.py",
         "function (imported; one of 2 files) fetch: its body calls subprocess.run (shell, line 5)"),
    ]  # fmt: skip
    assert "app/server.py" not in agents  # (an MCP server's tools are not an agent's)


def test_a_command_runs_in_its_own_compose_service(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (agent,) = _map(tmp_path, monkeypatch, "map_misjoin")
    assert [(r["kind"], r["name"]) for r in agent["runners"]] == [("compose-service", "agent")]
    assert (agent["workdir"]["path"], agent["workdir"]["host_source"]) == ("/work", "./src")


def test_a_composite_action_runs_in_its_callers_jobs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agents = _map(tmp_path, monkeypatch, "AG301/fail/composite-action-callers")
    runners = [[(r["name"], r["triggers"], r["evidence"][0]["path"]) for r in a["runners"]]
               for a in agents]  # fmt: skip
    comment = ("comment", ["issue_comment"], ".github/workflows/marvin-comment-on-pr.yml")
    review = ("review", ["pull_request"], ".github/workflows/marvin-review.yml")
    # (the composite's own step is not drawn a third time: each caller's configuration is)
    assert runners == [[comment], [review]]


# Modelled on anthropics/claude-code-action's test-base-action.yml: a job hands the
# repository's own action `claude_args`, read as a claude command line of the workflow.
BASE_ACTION_TEST = """\
name: Test Claude Code Action

on:
  pull_request:
  workflow_dispatch:

jobs:
  test-inline-prompt:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@de0fac2e4500dabe0009e67214ff5f5447ce83dd # v6.0.2
      - name: Test with inline prompt
        uses: ./base-action
        with:
          prompt: List the files in the current directory
          claude_args: '--allowedTools "LS,Read"'
  test-prompt-file:
    runs-on: ubuntu-latest
    steps:
      - run: claude -p "$(cat prompt.txt)" --allowedTools Bash
"""


def test_a_workflow_command_line_runs_in_its_job(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "w" / ".github" / "workflows").mkdir(parents=True)
    (tmp_path / "w" / ".github" / "workflows" / "test-base-action.yml").write_text(BASE_ACTION_TEST)
    monkeypatch.chdir(tmp_path / "w")
    result = CliRunner().invoke(app, ["map", ".", "--format", "json", "--no-project-config"])
    assert result.exit_code == 0, result.stdout
    agents = json.loads(result.stdout)["map"]["agents"]
    assert [
        (
            a["site"]["evidence"][0]["line"],
            [(r["kind"], r["name"], r["triggers"]) for r in a["runners"]],
        )
        for a in agents
    ] == [
        (16, [("workflow-job", "test-inline-prompt", ["pull_request", "workflow_dispatch"])]),
        (20, [("workflow-job", "test-prompt-file", ["pull_request", "workflow_dispatch"])]),
    ]


def test_browser_use_beta_agent_is_drawn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Modelled on browser-use's examples/beta_agent/basic.py (`browser_use.beta.Agent`)."""
    (agent,) = _map(tmp_path, monkeypatch, "map_browser_beta")
    assert (agent["site"]["kind"], agent["site"]["engine"], agent["site"]["evidence"]) == (
        "definition",
        "browser-use",
        [{"path": "basic.py", "line": 7, "note": "browser_use.beta.Agent"}],
    )


def test_several_agents_are_boxed_for_the_real_mermaid_parser(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Four agents (map_k8s): one box each, last first (drawn top-down as agent-1..4); the
    Docker socket mounted into the Deployment is a red folder node with its rule."""
    _map(tmp_path, monkeypatch, "map_k8s")
    result = CliRunner().invoke(app, ["map", ".", "--format", "mermaid", "--no-project-config"])
    assert result.exit_code == 0
    out = result.stdout
    boxes = [line for line in out.splitlines() if line.startswith("  subgraph ")]
    assert boxes == [f'  subgraph g{n}["agent-{n}"]' for n in (4, 3, 2, 1)]
    (doc,) = mermaid_parser.parse([out])
    assert doc["ok"], doc.get("error")
    sockets = [k for k, v in doc["nodes"].items() if v.startswith("docker socket (AG203)")]
    assert [doc["nodes"][k] for k in sockets] == [
        "docker socket (AG203)<br>/var/run/docker.sock -> /var/run/docker.sock"
    ]
    assert [e[2] for e in doc["edges"] if e[1] in sockets] == ["mounts"]
    (deployment,) = [v for v in doc["nodes"].values() if "Deployment/reviewer" in v]
    assert deployment == (
        "Kubernetes Deployment/reviewer container claude, image node:22-slim<br>"
        "runs privileged (AG403), shares the host's network (AG405)"
    )


def test_from_dot_import_names_this_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`from . import agent` in pkg/tools.py is pkg/__init__.py's agent, not the one of the
    folder above (the import is recorded with one dot more than it names)."""
    root = tmp_path / "rel"
    (root / "pkg").mkdir(parents=True)
    (root / "__init__.py").write_text('from pydantic_ai import Agent\n\nagent = Agent("x")\n')
    (root / "pkg" / "__init__.py").write_text(
        'from pydantic_ai import Agent\n\nagent = Agent("openai:gpt-4o")\n'
    )
    (root / "pkg" / "tools.py").write_text(
        "import os\n\nfrom . import agent\n\n\n@agent.tool_plain\ndef rm(p: str) -> None:\n"
        "    os.remove(p)\n"
    )
    monkeypatch.chdir(root)
    result = CliRunner().invoke(app, ["map", ".", "--format", "json", "--no-project-config"])
    assert result.exit_code == 0, result.stdout
    agents = {
        a["site"]["evidence"][0]["path"]: a for a in json.loads(result.stdout)["map"]["agents"]
    }
    assert _tool_rows(agents["__init__.py"]) == []
    assert _tool_rows(agents["pkg/__init__.py"]) == [
        ("rm", "pkg/tools.py", "@agent.tool_plain rm: its body calls os.remove (file, line 8)")
    ]
