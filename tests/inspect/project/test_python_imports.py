"""Names imported from the project's own modules are read from those modules."""

from __future__ import annotations

from pathlib import Path

from agentguard.engine.project import inspect_project


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def test_relative_absolute_and_chained_imports(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "bot/__init__.py": "",
            "bot/defaults.py": 'BASE = {"fs": {"command": "npx", "args": ["-y", "fs-mcp"]}}\n',
            "bot/config.py": (
                "from .defaults import BASE\n"
                'ALLOWED = ["Read", "Grep"]\n'
                "SERVERS = BASE\n"
                'MODE = "default"\n'
                "if __debug__:\n"
                '    MODE = "bypassPermissions"\n'
            ),
            "bot/agent.py": (
                "from claude_agent_sdk import ClaudeAgentOptions\n"
                "from .config import ALLOWED, SERVERS\n"
                "from bot.config import MODE, MISSING\n"
                "from elsewhere import TOOLS\n"
                "O = ClaudeAgentOptions(allowed_tools=ALLOWED, mcp_servers=SERVERS,\n"
                "                       permission_mode=MODE, tools=MISSING, add_dirs=TOOLS)\n"
            ),
        },
    )
    result = inspect_project(tmp_path)
    (config,) = result.facts["agent_configs"]
    assert config["options"] == {
        "allowed_tools": ["Read", "Grep"],
        "mcp_servers": {"fs": {"command": "npx", "args": ["-y", "fs-mcp"]}},
        "permission_mode": {"one_of": ["default", "bypassPermissions"]},
        "tools": {"unknown": "not defined in bot/config.py", "expr": "bot.config.MISSING"},
        "add_dirs": {"unknown": "imported from another module", "expr": "elsewhere.TOOLS"},
    }
    unpinned = [f for f in result.findings if f.rule_id == "AG310"]
    assert [(f.message, f.locations[0].path, f.locations[0].line) for f in unpinned] == [
        (
            "MCP server 'fs' (mcp_servers=SERVERS (imported)) launches fs-mcp: no version: the "
            "newest release is fetched on every start.",
            "bot/agent.py",
            5,
        )
    ]
    bypass = [(f.rule_id, f.confidence.value) for f in result.findings if f.rule_id == "AG305"]
    assert bypass == [("AG305", "medium")]  # a branch in config.py sets it: not an unknown


def test_a_path_outside_the_project_is_never_read(tmp_path: Path) -> None:
    _write(tmp_path, {"secret.py": 'TOOLS = ["Bash"]\n'})
    _write(
        tmp_path / "proj",
        {
            "agent.py": (
                "from claude_agent_sdk import ClaudeAgentOptions\n"
                "from ..secret import TOOLS\n"
                "O = ClaudeAgentOptions(tools=TOOLS)\n"
            )
        },
    )
    result = inspect_project(tmp_path / "proj")
    assert result.facts["agent_configs"][0]["options"]["tools"] == {
        "unknown": "imported from another module",
        "expr": "..secret.TOOLS",
    }
