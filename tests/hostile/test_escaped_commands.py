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


# Found by the second attack (each ran claude here: bash, PyYAML, Python, Node); all were
# exit 0 with no source before. (text, whether the file may be a shell's)
EXPANDED = [
    ("c''laude --dangerously-skip-permissions\n", True),  # bash quote removal
    ('c""laude --dangerously-skip-permissions\n', True),
    ('"cl"aude --dangerously-skip-permissions\n', True),
    ("cl\\aude --dangerously-skip-permissions\n", True),  # bash backslash removal
    ("\\claude --dangerously-skip-permissions\n", True),  # (the alias-bypassing form)
    ("$'\\x63'laude --dangerously-skip-permissions\n", True),
    ("eval $'\\x63laude\\x20--dangerously-skip-permissions'\n", True),  # escaped separator
    ('run: "claude\\x20--dangerously-skip-permissions"\n', True),
    ('run: "echo\\x20\\x63laude\\x20--dangerously-skip-permissions"\n', True),
    ("$'\\u63laude' --dangerously-skip-permissions\n", True),  # bash's short \u
    ("$'\\U63laude' --dangerously-skip-permissions\n", True),
    ("echo -e '\\0143laude --dangerously-skip-permissions' | sh\n", True),  # \0NNN
    ("printf '\\143laude\\040--dangerously-skip-permissions' | sh\n", True),
    ('run: "cla\\\n    ude --dangerously-skip-permissions"\n', True),  # YAML continuation
    ("cla\\\nude --dangerously-skip-permissions\n", True),  # bash's
    ('subprocess.run(["cla\\\nude", "--dangerously-skip-permissions"])\n', False),
    (
        'subprocess.run(["\\N{LATIN SMALL LETTER C}laude", "--dangerously-skip-permissions"])\n',
        False,
    ),
    ('spawn("\\u{63}laude", ["--dangerously-skip-permissions"])\n', False),  # JS code point
    # a decoy that the expansion hides (`codex\x41` is a use as written, `codexA` is none)
    ('echo codex\\x41\nrun: "\\x63laude --dangerously-skip-permissions"\n', True),
]


@pytest.mark.parametrize(("text", "shell"), EXPANDED)
def test_what_a_runner_expands_into_a_command_is_seen(text: str, shell: bool) -> None:
    assert escaped_command(text.encode(), shell=shell) is True


@pytest.mark.parametrize(
    "text",
    [
        "c''laude --dangerously-skip-permissions\n",
        "cl\\aude --dangerously-skip-permissions\n",
        "\\claude --dangerously-skip-permissions\n",
    ],
)
def test_the_shell_removal_in_a_file_of_no_shell_is_none(text: str) -> None:
    """(Python's `'cl''aude'` is a name assembled from parts, as `"cl" "aude"` is: the
    known limit; `\\c` in a Python or JavaScript string is a backslash and a `c`)"""
    assert escaped_command(text.encode(), shell=True) is True
    assert escaped_command(text.encode(), shell=False) is False


def test_a_shell_script_spelled_by_quote_removal_is_a_failed_source(tmp_path: Path) -> None:
    _write(tmp_path, "scripts/nightly.sh", "#!/bin/bash\nc''laude --dangerously-skip-permissions\n")
    code, doc = _inspect(tmp_path)
    assert code == 3
    failed = [(s["name"], s["error_code"]) for s in doc["sources"] if s["status"] == "failed"]
    assert failed == [("scripts/nightly.sh", "escaped-command")]


@pytest.mark.parametrize(
    "text",
    [
        # the Claude Agent SDK's own message (a `\n` beside a plain name is prose's)
        '"  npm install -g @anthropic-ai/claude-code\\n"\n',
        'open_ended.append(f"claude_args: {shown}")\n',  # a string's prefix, no word
        'CASES = [(b"claude_args: --mcp-config x\\n", True)]\n',
        'write_text("#!/bin/sh\\nclaude -p hi\\n")\n',
        'PATH = "\\\\x63laude"\n',  # an escaped backslash: a backslash, then x63
        "echo don't call claude\n",
    ],
)
@pytest.mark.parametrize("shell", [True, False])
def test_expansions_that_spell_no_new_command_are_no_failure(text: str, shell: bool) -> None:
    assert escaped_command(text.encode(), shell=shell) is False
