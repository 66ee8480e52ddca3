"""A command line that only letter escapes spell is never a file that holds nothing.

Found by attacking the encoding check: ``run: "\\x63laude --dangerously-skip-permissions"``
in a workflow on ``pull_request_target`` (YAML's double quotes turn ``\\x63`` into ``c``,
the runner runs ``claude``) gave exit 0 and no source, where the same line written plainly
gives AG301 and more. The needles and the line readers read the text as written; such a
file is now a failed source that says why (bash's ``$'\\x63laude'``, ``printf
'\\143laude' | sh``, a Python or JSON string with ``\\u0063`` likewise). A command
assembled from variables is beyond it (docs/security.md, "Known limit").
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentguard.cli import app
from agentguard.inspect.project.needles import escaped_command

# each file runs claude with permission checks off; {c} is how its `c` is written (and the
# script quotes it as bash's `$'...'`, which expands the escape, when it is escaped)
FILES = {
    ".github/workflows/triage.yml": (
        "on: [pull_request_target]\njobs:\n  triage:\n    runs-on: ubuntu-latest\n    steps:\n"
        '      - run: "{c}laude --dangerously-skip-permissions -p triage"\n'
    ),
    "scripts/nightly.sh": "#!/bin/bash\n{o}{c}laude{q} --dangerously-skip-permissions -p 'fix the build'\n",
    "tool.py": (
        "import subprocess\n\n"
        'subprocess.run(["{c}laude", "--dangerously-skip-permissions", "-p", "go"])\n'
    ),
    "Dockerfile": 'FROM node:20\nCMD ["{c}laude", "--dangerously-skip-permissions"]\n',
}
SPELLINGS = {"hex": "\\x63", "unicode": "\\u0063", "long-unicode": "\\U00000063", "octal": "\\143"}


def _inspect(root: Path) -> tuple[int, dict[str, Any]]:
    result = CliRunner().invoke(
        app, ["inspect", str(root), "--format", "json", "--no-cache", "--no-project-config"]
    )
    return result.exit_code, json.loads(result.stdout)


def _write(root: Path, path: str, text: str) -> None:
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    (root / path).write_text(text)


@pytest.mark.parametrize("path", sorted(FILES))
def test_written_plainly_the_command_is_read(path: str, tmp_path: Path) -> None:
    """(the control: each file's command is read when its `c` is a `c`)"""
    _write(tmp_path, path, FILES[path].format(c="c", o="", q=""))
    code, doc = _inspect(tmp_path)
    assert code == 1
    assert not [s for s in doc["sources"] if s.get("error_code") == "escaped-command"]
    assert any(
        f["rule_id"] in ("AG301", "AG305") and f["locations"][0]["path"] == path
        for f in doc["findings"]
    )


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
@pytest.mark.parametrize("path", sorted(FILES))
def test_spelled_with_escapes_it_is_a_failed_source(
    path: str, spelling: str, tmp_path: Path
) -> None:
    escaped = FILES[path].format(c=SPELLINGS[spelling], o="$'", q="'")  # (bash: $'...')
    _write(tmp_path, path, escaped)
    code, doc = _inspect(tmp_path)
    assert code == 3
    failed = [s for s in doc["sources"] if s["status"] == "failed"]
    assert [(s["name"], s["error_code"]) for s in failed] == [(path, "escaped-command")]
    assert doc["complete"] is False


@pytest.mark.parametrize(
    "text",
    [
        'PATTERN = re.compile(rb"\\x41\\x42[\\x61-\\x7a]")\n',  # (escapes, no command)
        '{"model": "\\u0063laude-3-5-haiku"}\n',  # a model's name, not a command
        "claude -p hi  # plain, and nothing escaped\n",
        'echo "\\x63odexes"\n',
        "printf '\\n\\t\\0'\n",
    ],
)
def test_escapes_that_spell_no_command_are_no_failure(text: str) -> None:
    assert escaped_command(text.encode()) is False


def test_an_escaped_command_beside_a_plain_one_is_still_seen() -> None:
    text = 'claude -p "plain"\nrun: "\\x63laude --dangerously-skip-permissions"\n'
    assert escaped_command(text.encode()) is True
