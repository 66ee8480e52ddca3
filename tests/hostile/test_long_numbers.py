"""One number Python refuses blanks nothing but its own file (#23 item 14).

A 4301-digit integer exceeds Python's int-string limit: json, tomllib and the YAML
constructor raise ValueError. The promises: that file is a failed source named with why
(exit 3), every other file's findings are still reported (with --allow-incomplete a
critical compose finding still fails the gate), and an image's managed settings holding
one never end inspect as a usage error (exit 2) with no report.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from agentguard.cli import app
from tests.inspect.engine_support import inspect_cli, report_of
from tests.inspect.oci_writer import Platform, write_layout

N = "1" * 4301
AGENT = (
    "from claude_agent_sdk import ClaudeAgentOptions\n"
    'opts = ClaudeAgentOptions(permission_mode="bypassPermissions", allowed_tools=["Read"])\n'
)
COMPOSE = (
    "services:\n  agent:\n    image: x\n"
    '    volumes: ["/var/run/docker.sock:/var/run/docker.sock"]\n'
)
LONG = {
    ".mcp.json": f'{{"mcpServers": {{"a": {{"command": "npx", "args": ["x"], "n": {N}}}}}}}',
    ".claude/settings.json": f'{{"permissions": {{"allow": ["Bash"]}}, "n": {N}}}',
    ".devcontainer/devcontainer.json": f'{{"image": "python:3.12", "n": {N}}}',
    ".codex/config.toml": f'model = "o3"\nn = {N}\n',
    "pyproject.toml": f'[project]\nname = "x"\nversion = "0"\n[tool.x]\nn = {N}\n',
}


def _project(root: Path) -> Path:
    for rel, text in {"agent.py": AGENT, "compose.yaml": COMPOSE, **LONG}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _check(root: Path, *args: str) -> tuple[int, dict[str, Any]]:
    result = CliRunner().invoke(app, ["check", str(root), "--format", "json", *args])
    return result.exit_code, json.loads(result.stdout)


def test_each_long_number_fails_its_own_file_and_nothing_else(tmp_path: Path) -> None:
    root = _project(tmp_path / "repo")

    code, doc = _check(root)
    lenient, again = _check(root, "--allow-incomplete")

    assert code == 3
    failed = {s["name"]: s for s in doc["sources"] if s["status"] == "failed"}
    for rel in (".mcp.json", ".claude/settings.json", ".devcontainer/devcontainer.json"):
        assert failed[rel]["reason"] == (
            "a number too long to read (Python refuses integers of more than 4300 digits)"
        ), failed
    assert ".codex/config.toml" in failed and "pyproject.toml" in failed, failed
    assert not any(s["kind"] == "project" for s in failed.values()), failed  # no step lost
    rules = {f["rule_id"] for f in doc["findings"]}
    assert {"AG203", "AG305"} <= rules, rules  # the compose file's and the agent's findings
    # --allow-incomplete (an action input): the critical compose finding still fails it
    assert lenient == 1
    assert any(f["rule_id"] == "AG203" and f["severity"] == "critical" for f in again["findings"])


def test_a_long_number_in_a_compose_file_fails_that_file(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "agent.py").write_text(AGENT)
    (root / "compose.yaml").write_text(COMPOSE + f"    x-n: {N}\n    cpus: {N}.5e999999\n")
    (root / "deploy").mkdir()
    (root / "deploy" / "compose.yaml").write_text(COMPOSE)

    code, doc = _check(root)

    assert code in (1, 3)
    assert any(
        f["rule_id"] == "AG203" and f["locations"][0]["path"] == "deploy/compose.yaml"
        for f in doc["findings"]
    ), doc["findings"]
    assert not any(s["kind"] == "project" and s["status"] == "failed" for s in doc["sources"])


def test_long_managed_settings_in_an_image_are_a_failed_source(tmp_path: Path) -> None:
    """Was exit 2 (a usage error) with no report."""
    layout = write_layout(
        tmp_path / "layout",
        [
            Platform(
                "linux",
                "amd64",
                [
                    (
                        {
                            "etc/claude-code/managed-settings.json": (
                                f'{{"permissions": {{"defaultMode": "default"}}, "n": {N}}}'
                            ),
                            "etc/claude-code/managed-mcp.json": (
                                '{"mcpServers": {"gh": {"command": "npx", "args": ["-y", "gh"]}}}'
                            ),
                        },
                        "gzip",
                    )
                ],
                config={"Cmd": ["sleep", "1"], "WorkingDir": "/work"},
            )
        ],
    )

    result = inspect_cli(layout, "--format", "json")

    assert result.exit_code == 3, result.stdout
    report = report_of(result)
    failed = [s for s in report["sources"] if s["status"] == "failed"]
    assert [s["name"] for s in failed] == ["/etc/claude-code/managed-settings.json"], failed
    assert "4300 digits" in failed[0]["reason"]
    assert [f["rule_id"] for f in report["findings"] if f["rule_id"].startswith("AG3")] == ["AG310"]


def test_a_long_number_in_the_compose_file_images_are_read_from(tmp_path: Path) -> None:
    """--images-from-compose (an action input) reads the compose file itself: was exit 2."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "agent.py").write_text(AGENT)
    (root / "compose.yaml").write_text(COMPOSE + f"    x-n: {N}\n")

    code, doc = _check(root, "--images-from-compose")

    assert code == 3
    failed = [s for s in doc["sources"] if s["kind"] == "compose" and s["status"] == "failed"]
    assert [s["name"] for s in failed] == ["compose.yaml"], doc["sources"]
    assert "4300 digits" in failed[0]["reason"]
    assert "AG305" in {f["rule_id"] for f in doc["findings"]}
