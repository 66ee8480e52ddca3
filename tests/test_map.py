"""`agentguard map`: the example's map compared whole (text, JSON), its JSON against the
published schema, the Mermaid output through the real Mermaid parser (nodes and edges
compared whole), and names from the scanned project that try to break out of a label."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from agentguard.cli import app
from tests import mermaid_parser
from tests.snapshot import assert_snapshot, normalise

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "kontext-bot"
MAP_SCHEMA = json.loads((ROOT / "agentguard" / "schemas" / "map-1.json").read_text())
REPORT_SCHEMA = json.loads((ROOT / "agentguard" / "schemas" / "report-1.json").read_text())


@pytest.fixture()
def example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    dest = tmp_path / "kontext-bot"
    shutil.copytree(EXAMPLE, dest, ignore=shutil.ignore_patterns("pylock.toml", "*.lock"))
    monkeypatch.chdir(tmp_path)
    return dest


def run_map(target: str, fmt: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["map", target, "--format", fmt], env={"NO_COLOR": "1"})
    return result.exit_code, result.stdout


def test_example_text_says_the_sentence(example: Path) -> None:
    code, out = run_map("kontext-bot", "text")
    assert code == 0
    assert (
        "agent-1: The agent in kontext_bot/bot.py:22 (claude-agent-sdk), running in compose "
        "service bot, from the image built by Dockerfile, works in /app, which is the host "
        "folder . (it holds docs/); it can run Bash, read and write files, fetch the web; it "
        "talks to MCP servers tasks (in-process), tracker (npx, unpinned); when the primary "
        "model fails it answers with claude-haiku-4-5 and says nothing.\n"
    ) in out
    assert_snapshot("map-example.txt", out)


def test_example_json_whole_and_valid(example: Path) -> None:
    code, out = run_map("kontext-bot", "json")
    assert code == 0
    doc = json.loads(out)
    jsonschema.Draft202012Validator(MAP_SCHEMA).validate(doc)
    assert doc["complete"] is True
    assert_snapshot("map-example.json", normalise(out, (example, "<example>")))


def test_inspect_and_check_json_carry_the_map(example: Path) -> None:
    _code, mapped = run_map("kontext-bot", "json")
    for command in ("inspect", "check"):
        result = CliRunner().invoke(app, [command, "kontext-bot", "--format", "json"])
        doc = json.loads(result.stdout)
        jsonschema.Draft202012Validator(REPORT_SCHEMA).validate(doc)
        assert doc["map"] == json.loads(mapped)["map"], command


def test_report_schema_holds_the_map_schema() -> None:
    """report-1.json's copy of the map definitions is map-1.json's."""
    for name, definition in MAP_SCHEMA["$defs"].items():
        if name.startswith("map_"):
            assert REPORT_SCHEMA["$defs"][name] == definition, name
    assert REPORT_SCHEMA["properties"]["map"]["$ref"] == "#/$defs/map_map"


def test_no_agent_is_not_an_empty_verdict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "README.md").write_text("nothing here\n")
    monkeypatch.chdir(tmp_path)
    code, out = run_map("p", "text")
    assert code == 0
    assert out.startswith("No agent found in p.\n")
    assert "sources read, none failed" in out


EXAMPLE_NODES = {
    "a1": "agent-1: claude-agent-sdk<br>kontext_bot/bot.py:22",
    "r2": "compose service bot, from the image built by Dockerfile",
    "f3": "/app, which is the host folder . (it holds docs/)",
    "t4": "shell: Bash, BashOutput, KillShell, KillBash<br>asked",
    "t5": "file: Read, Write, Edit, MultiEdit, Glob, Grep, NotebookEdit, LS<br>pre-approved",
    "t6": "web: WebFetch, WebSearch<br>asked",
    "m7": "MCP tasks<br>in-process<br>in this process",
    "m8": "MCP tracker<br>npx -y @modelcontextprotocol/server-memory<br>unpinned (AG310)",
    "s9": "secret ANTHROPIC_API_KEY",
    "f10": "falls back to<br>claude-haiku-4-5<br>silently (AG320)",
}
EXAMPLE_EDGES = [
    ["a1", "r2", "runs in"],
    ["a1", "f3", "works in"],
    ["a1", "t4", "can use"],
    ["a1", "t5", "can use"],
    ["a1", "t6", "can use"],
    ["a1", "m7", "talks to"],
    ["a1", "m8", "talks to"],
    ["r2", "s9", "gets"],
    ["a1", "f10", "on failure"],
]

HOSTILE = [
    "]-->x[",
    "`x`<img src=x onerror=alert(1)>",
    '"]; click a1 "javascript:alert(1)"',
    "%%{init: {'securityLevel':'loose'}}%%",
    "a|b|c --> d",
]


def _hostile_project(root: Path) -> None:
    root.mkdir()
    (root / "agent.py").write_text(
        "from claude_agent_sdk import ClaudeAgentOptions\nopts = ClaudeAgentOptions(cwd='.')\n"
    )
    (root / "Dockerfile").write_text("FROM python:3.12-slim\nWORKDIR /app\nCOPY . /app\n")
    services = "".join(
        f"  {json.dumps(name)}:\n    build: .\n    environment:\n      API_TOKEN: x\n"
        for name in HOSTILE
    )
    (root / "compose.yaml").write_text("services:\n" + services)
    servers = {name: {"command": "npx", "args": ["-y", name]} for name in HOSTILE}
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))


def test_mermaid_real_parser_on_the_example(example: Path) -> None:
    code, out = run_map("kontext-bot", "mermaid")
    assert code == 0
    (doc,) = mermaid_parser.parse([out])
    assert doc["ok"], doc.get("error")
    assert doc["type"] == "flowchart-v2"
    assert doc["nodes"] == EXAMPLE_NODES
    assert doc["edges"] == EXAMPLE_EDGES


def test_mermaid_hostile_names_stay_labels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Service and server names with Mermaid syntax, backticks and HTML are text in their
    labels: the parser sees exactly the nodes and edges agentguard wrote, and each label
    decodes to the name as written."""
    _hostile_project(tmp_path / "h")
    monkeypatch.chdir(tmp_path)
    code, out = run_map("h", "mermaid")
    assert code == 3  # such names break the Compose Specification: a failed source, still read
    (doc,) = mermaid_parser.parse([out])
    assert doc["ok"], doc.get("error")
    ours = re.compile(r"^[arftmsp][0-9]+$")
    assert all(ours.match(n) for n in doc["nodes"]), doc["nodes"]
    labels = list(doc["nodes"].values())
    for name in HOSTILE:
        assert any(f"compose service {name}, from the image" in label for label in labels), name
        assert any(label.startswith(f"MCP {name}<br>") for label in labels), name
    # one agent, one runner per service, its folder, 3 tools, 5 servers, one secret
    assert len(doc["nodes"]) == 1 + len(HOSTILE) + 1 + 3 + len(HOSTILE) + 1
    # every line is one agentguard writes: a node, an edge, the hazard class
    label = r'"([^"`<>%\n]|<br/>)*"'  # <br/>: agentguard's own line break
    statement = re.compile(
        rf"^(flowchart LR|  [a-z][0-9]+(\[|\[\[|\[\(|\{{\{{|\(\[|>){label}(\]|\]\]|\)\]|\}}\}}|\]\))"
        rf"|  [a-z][0-9]+ (-->|==>)\|{label}\| [a-z][0-9]+"
        rf"|  subgraph g[0-9]+\[{label}\]|  end"
        r"|  classDef hazard fill:#fde2e2,stroke:#c0392b,stroke-width:2px"
        r"|  class [a-z][0-9]+(,[a-z][0-9]+)* hazard)$"
    )
    bad = [line for line in out.splitlines() if not statement.match(line)]
    assert bad == []


def test_text_output_escapes_hostile_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "t"
    root.mkdir()
    (root / "agent.py").write_text(
        "from claude_agent_sdk import ClaudeAgentOptions\nopts = ClaudeAgentOptions()\n"
    )
    (root / ".mcp.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "x\u001b]0;pwned\u0007\n::error::forged": {
                        "command": "npx",
                        "args": ["-y", "p"],
                    }
                }
            }
        )
    )
    monkeypatch.chdir(tmp_path)
    code, out = run_map("t", "text")
    assert code == 0
    assert "\x1b" not in out and "\x07" not in out
    assert not any(line.lstrip().startswith("::") for line in out.splitlines())
    assert "x\\x1b]0;pwned\\x07\\n" in out


def test_action_writes_the_mermaid_map_to_the_job_summary(example: Path, tmp_path: Path) -> None:
    """The action's map step, as the runner runs it: the summary gets the agent's sentence
    and a diagram the real parser reads; nothing it prints is a workflow command."""
    import subprocess

    from tests.test_ci_files import action_step, env

    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    step = action_step("Agent map to the job summary")
    result = subprocess.run(
        ["bash", "-e", "-c", step["run"]],
        env=env(GITHUB_STEP_SUMMARY=str(summary), INPUT_PATH=str(example), NO_COLOR="1"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    text = summary.read_text()
    assert text.startswith("earlier step\n## agentguard map of ")
    assert "- **agent-1**: The agent in kontext\\_bot/bot.py:22" not in text  # no md escaping of _
    assert "- **agent-1**: The agent in kontext_bot/bot.py:22 (claude-agent-sdk)" in text
    block = text.split("```mermaid\n", 1)[1].split("```\n", 1)[0]
    (doc,) = mermaid_parser.parse([block])
    assert doc["ok"], doc.get("error")
    assert doc["nodes"] == EXAMPLE_NODES


def test_markdown_hostile_names_open_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _hostile_project(tmp_path / "h")
    monkeypatch.chdir(tmp_path)
    code, out = run_map("h", "markdown")
    assert code == 3
    fences = [line for line in out.splitlines() if line.startswith("```")]
    assert fences == ["```mermaid", "```"]
    prose = out.split("```mermaid", 1)[0]
    assert "<img" not in prose.replace("\\<img", "")
    assert "`x`\\<img src=x onerror=alert(1)\\>" in prose  # a code span, then text


def test_an_agent_action_and_its_inputs_are_one_agent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wf = tmp_path / "w" / ".github" / "workflows"
    wf.mkdir(parents=True)
    (wf / "claude.yml").write_text(
        "on: [issue_comment]\n"
        "jobs:\n"
        "  claude:\n"
        "    runs-on: ubuntu-latest\n"
        "    steps:\n"
        "      - uses: anthropics/claude-code-action@v1\n"
        "        with:\n"
        "          anthropic_api_key: ${{ secrets.ANTHROPIC_API_KEY }}\n"
        "          claude_args: |\n"
        '            --allowedTools "Bash,WebFetch"\n'
    )
    monkeypatch.chdir(tmp_path)
    code, out = run_map("w", "json")
    assert code == 0
    (agent,) = json.loads(out)["map"]["agents"]
    assert agent["site"]["kind"] == "workflow-step"
    assert agent["site"]["engine"] == "anthropics/claude-code-action"
    assert agent["runners"][0]["kind"] == "workflow-job"
    assert agent["runners"][0]["triggers"] == ["issue_comment"]
    shell = next(t for t in agent["tools"] if t["category"] == "shell")
    assert (shell["state"], shell["approval"]) == ("live", "pre-approved")
    assert [s["name"] for s in agent["secrets"]] == ["ANTHROPIC_API_KEY"]
