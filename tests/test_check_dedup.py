"""The same finding reached from two sources is one finding with both locations: an image
built from the project holds the project's agent code (check --image / --images-from-compose)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from agentguard.cli import app
from tests.inspect.oci_writer import Platform, write_layout

BOT = """\
from claude_agent_sdk import ClaudeAgentOptions

OPTIONS = ClaudeAgentOptions(tools=["Bash"], cwd="/srv/work", setting_sources=[])
"""


def test_a_file_copied_into_the_image_is_reported_once(tmp_path: Path) -> None:
    project = tmp_path / "bot"
    project.mkdir()
    (project / "bot.py").write_text(BOT)
    layout = write_layout(
        tmp_path / "image",
        [
            Platform(
                "linux",
                "amd64",
                [({"app/bot.py": BOT}, "gzip")],
                config={"config": {"WorkingDir": "/app", "User": "10001"}},
            )
        ],
    )
    result = CliRunner().invoke(
        app, ["check", str(project), "--image", str(layout), "--format", "json"]
    )
    doc = json.loads(result.stdout)
    shell = [f for f in doc["findings"] if f["rule_id"] == "AG301"]
    assert len(shell) == 1, shell
    (loc_folder, loc_image) = shell[0]["locations"]
    assert (loc_folder["path"], loc_folder["line"]) == ("bot.py", 3)
    assert (loc_image["path"], loc_image["line"]) == ("/app/bot.py", 3)
    assert loc_image["note"] == f"the same in {layout}"
