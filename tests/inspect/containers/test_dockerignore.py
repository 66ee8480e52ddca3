""".dockerignore matching with the engine's rules."""

from __future__ import annotations

import pytest

from agentguard.inspect.project.dockerignore import parse_dockerignore

IGNORE = """
# comment
*.md
!README.md
/secrets
docs/**
**/.env
**/*.pem
id_*
"""


@pytest.mark.parametrize(
    ("path", "excluded"),
    [
        ("PLAN.md", True),
        ("README.md", False),
        ("sub/PLAN.md", False),  # '*' does not cross '/'
        ("secrets/api.key", True),  # a matched folder excludes what is below it
        ("docs/a/b.txt", True),
        (".env", True),
        ("app/config/.env", True),
        ("certs/tls.pem", True),
        ("id_rsa", True),
        ("src/main.py", False),
    ],
)
def test_matching(path: str, excluded: bool) -> None:
    assert parse_dockerignore(".dockerignore", IGNORE).excluded(path) is excluded


def test_allow_list_style_keeps_everything_else_out_and_last_match_wins() -> None:
    ignore = parse_dockerignore(".dockerignore", "*\n!src/\n!pyproject.toml\nsrc/.env\n")
    assert [ignore.excluded(p) for p in ("src/a.py", "pyproject.toml", ".env", "src/.env")] == [
        False,
        False,
        True,
        True,
    ]
