"""Shared by the engine tests of agents started hardened: a busybox image, the compose
project of the issue, running a written script, reading the verification facts."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.inspect.engine_support import Made, unique

KEY = "abc123-not-a-real-key"
AGENT_SH = """\
echo "agent up"
echo "key=$AGENT_API_KEY"
echo "cwd=$(pwd)"
echo "code=$(ls -A /app | tr '\\n' ' ')"
"""


def build_shell_image(made: Made, tmp_path_factory: pytest.TempPathFactory) -> str:
    """busybox's shell and applets on PATH, an empty /app as the working directory."""
    tag = f"{unique('harden-sh')}:1"
    made.build(
        tag,
        tmp_path_factory.mktemp("shell-image"),
        'FROM scratch\nCOPY busybox /bin/busybox\nRUN ["/bin/busybox", "--install", "-s", "/bin"]\n'
        "WORKDIR /app\n",
    )
    made.images.append(f"{tag}-hardened")  # what harden builds from it
    return tag


def compose_project(root: Path, image: str) -> Path:
    root.mkdir()
    (root / "agent.sh").write_text(AGENT_SH)
    (root / "docs").mkdir()
    (root / "docs" / "plan.md").write_text("# internal roadmap\n")
    (root / ".env").write_text(f"AGENT_API_KEY={KEY}\n")
    (root / "compose.yml").write_text(
        "services:\n  agent:\n"
        f"    image: {image}\n"
        "    working_dir: /app\n"
        "    command: sh agent.sh\n"
        "    volumes:\n      - .:/app\n"
        "    environment:\n      AGENT_API_KEY: ${AGENT_API_KEY}\n"
    )
    return root / "compose.yml"


def run_script(script: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["sh", str(script)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, **env},
    )


def verification(report: dict[str, Any], probe: str) -> dict[str, Any]:
    facts = report["facts"]["harden"]["verification"]
    return dict(next(v for v in facts if v["probe"] == probe))


def fixed_ids(report: dict[str, Any]) -> set[str]:
    return {f["rule_id"] for f in report["findings"] if f["suppressed"]}
