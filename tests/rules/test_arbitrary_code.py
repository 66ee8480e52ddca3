"""The one table of pre-approval patterns that run code of the model's choosing."""

from __future__ import annotations

import pytest

from agentguard.rules.arbitrary_code import _TESTS, arbitrary_code, unrestricted

CASES = [
    # (pattern, why it runs arbitrary code or None)
    ("Bash", "the whole shell"),
    ("Bash(*)", "any command"),
    ("Bash(python:*)", "python runs the code it is given (`-c`/`-e` or a script)"),
    ("Bash(python3.12 -m pytest:*)", "pytest " + _TESTS),
    ("Bash(make:*)", "make `--eval` and the Makefile's recipes run shell commands"),
    ("Bash(uv run pytest:*)", "pytest " + _TESTS),
    ("Bash(python script.py:*)", None),
    ("Bash(python -c:*)", "python runs the code it is given (`-c`/`-e` or a script)"),
    ("Bash(npm run test *)", "`npm run` runs a program or package script of the caller's choosing"),
    ("Bash(node:*)", "node runs the code it is given (`-c`/`-e` or a script)"),
    ("Bash(sh:*)", "sh runs the code it is given (`-c`/`-e` or a script)"),
    ("Bash(npx:*)", "npx downloads and runs any package"),
    (
        "Bash(pip install:*)",
        "`pip install` builds and installs any package (its build scripts run)",
    ),
    ("Bash(find:*)", "find `-exec` runs any command"),
    ("Bash(.venv/bin/*:*)", "`.venv/bin/*` matches any program there"),
    (
        "Bash(git:*)",
        "git with any subcommand: `-c` sets a pager or an alias that runs a shell command, "
        "and hooks run",
    ),
    ("Bash(git diff:*)", None),
    ("Bash(ls:*)", None),
    ("Bash(uv run ruff:*)", None),
    ("Bash(uv sync --all-extras --dev)", None),  # one exact command
    ("Bash(make test)", None),
    ("Bash(./bin/test.sh)", None),
    ("Bash(gh pr view:*)", None),
    ("WebFetch(*)", None),  # not the shell
    ("BashOutput", None),  # reads a command's output; runs none
]


@pytest.mark.parametrize(("pattern", "why"), CASES, ids=[c[0] for c in CASES])
def test_pattern_is_classified(pattern: str, why: str | None) -> None:
    assert arbitrary_code(pattern) == why


def test_unrestricted_approvals() -> None:
    got = {p: unrestricted(p) for p in ("WebFetch", "WebFetch(*)", "WebFetch(domain:x.org)",
                                         "Bash(python:*)", "Bash(ls:*)", "Read")}  # fmt: skip
    assert got == {
        "WebFetch": True,
        "WebFetch(*)": True,
        "WebFetch(domain:x.org)": False,
        "Bash(python:*)": True,
        "Bash(ls:*)": False,
        "Read": True,
    }
