"""Shared pieces of the hostile-repository tests: a CI-like environment full of secrets,
small project folders, and a check that no secret reaches any output format."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.hostile.promises import Run, run_agentguard

GITHUB_TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
RUNTIME_TOKEN = "eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJydW5uZXIifQ.c2lnbmF0dXJlc2ln"
CANARY = "canary-3f9a1c7e"  # a plain variable: environment text must never be read at all
CI_ENV = {
    "GITHUB_TOKEN": GITHUB_TOKEN,
    "ACTIONS_RUNTIME_TOKEN": RUNTIME_TOKEN,
    "AGENTGUARD_CANARY": CANARY,
    "NO_COLOR": "1",
}
SECRETS = (GITHUB_TOKEN, RUNTIME_TOKEN, CANARY)
MINIMAL_PYLOCK = 'lock-version = "1.0"\ncreated-by = "agentguard"\npackages = []\n'
PYPROJECT = '[project]\nname = "x"\nversion = "0"\ndependencies = ["requests"]\n'


def write(root: Path, files: dict[str, bytes | str]) -> Path:
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.encode() if isinstance(data, str) else data)
    return root


def every_format(*args: str, cwd: Path, env: dict[str, str] | None = None) -> dict[str, Run]:
    """The same command in text, JSON and SARIF (each run checked for a crash)."""
    runs = {}
    for fmt in ("text", "json", "sarif"):
        run = run_agentguard(*args, "--format", fmt, cwd=cwd, env={**CI_ENV, **(env or {})})
        run.check_no_crash()
        if fmt != "text":
            json.loads(run.stdout)
        runs[fmt] = run
    return runs


def assert_no_secret(texts: dict[str, str], secrets: tuple[str, ...] = SECRETS) -> None:
    for where, text in texts.items():
        for secret in secrets:
            assert secret not in text, f"{secret[:12]}... in {where}"


def outputs(runs: dict[str, Run]) -> dict[str, str]:
    out: dict[str, str] = {}
    for fmt, run in runs.items():
        out[f"{fmt} stdout"] = run.stdout
        out[f"{fmt} stderr"] = run.stderr
    return out


def sources(run: Run) -> list[dict[str, Any]]:
    return list(json.loads(run.stdout)["sources"])


def folder_texts(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): p.read_bytes().decode("utf-8", "replace")
        for p in folder.rglob("*")
        if p.is_file() and not p.is_symlink()
    }
