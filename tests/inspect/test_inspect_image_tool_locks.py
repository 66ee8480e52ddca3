"""`agentguard inspect IMAGE` run in a project whose lock is its tool's own: a `uv.lock`
made here by the real `uv lock` against a local wheel index, and the checked-in
`poetry.lock` Poetry wrote (tests/fixtures/existing_locks/README.md). Both locks hold
anyio 4.6.2.post1, idna 3.10 and sniffio 1.3.1 for Python 3.12 (their backports are ruled
out by markers). Two images built on the real engine from scratch: one installed as
locked (clean against either lock), one where idna moved and mcp 2 was added (AG110)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentguard.lock.backend import uv_binary
from tests.inspect.engine_support import (
    SITE,
    Made,
    dist_info,
    findings_of,
    inspect_cli,
    layers_of,
    metadata,
    report_of,
    unique,
    write_tree,
)
from tests.wheelhouse import build_wheel, write_simple_index

pytestmark = pytest.mark.engine

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
LOCKED = {"anyio": "4.6.2.post1", "idna": "3.10", "sniffio": "1.3.1"}
MOVED = {"anyio": "4.6.2.post1", "idna": "3.11", "sniffio": "1.3.1", "mcp": "2.3.0"}


def _build(made: Made, ctx: Path, installed: dict[str, str]) -> str:
    write_tree(
        ctx / "site",
        {f"{dist_info(n, v)}/METADATA": metadata(n, v) for n, v in installed.items()},
    )
    tag = f"{unique('tool-lock')}:1"
    made.build(
        tag,
        ctx,
        f"FROM scratch\nCOPY busybox /bin/busybox\nCOPY site/ {SITE}/\nWORKDIR /app\nUSER 10001\n",
    )
    return tag


@pytest.fixture(scope="module")
def images(
    docker_client: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, str]]:
    made = Made(docker_client)
    try:
        yield {
            "same": _build(made, tmp_path_factory.mktemp("same"), LOCKED),
            "moved": _build(made, tmp_path_factory.mktemp("moved"), MOVED),
        }
    finally:
        made.cleanup()


@pytest.fixture(scope="module")
def uv_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A uv project (virtual) pinned to anyio, whose uv.lock `uv lock` writes from a
    local index of small real wheels."""
    root = tmp_path_factory.mktemp("uv-project")
    wheels = root / "wheels"
    build_wheel(wheels, "anyio", "4.6.2.post1", ["idna>=2.8", "sniffio>=1.1"])
    build_wheel(wheels, "idna", "3.10")
    build_wheel(wheels, "idna", "3.11")
    build_wheel(wheels, "sniffio", "1.3.1")
    url = write_simple_index(wheels, root / "simple")
    project = root / "bot"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[project]\nname = "bot"\nversion = "0.1.0"\nrequires-python = ">=3.10"\n'
        'dependencies = ["anyio==4.6.2.post1", "idna==3.10"]\n\n[tool.uv]\npackage = false\n\n'
        f'[[tool.uv.index]]\nname = "local"\nurl = "{url}"\ndefault = true\n',
        encoding="utf-8",
    )
    subprocess.run(
        [uv_binary(), "lock", "--python", sys.executable],
        cwd=project,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
        env={"UV_CACHE_DIR": str(root / "uv-cache"), "PATH": "/usr/bin:/bin"},
    )
    assert 'name = "idna"\nversion = "3.10"' in (project / "uv.lock").read_text()
    return project


@pytest.fixture(scope="module")
def poetry_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("poetry-project")
    for name in ("pyproject.toml", "poetry.lock"):
        shutil.copy(FIXTURES / "existing_locks" / "anyio" / name, project / name)
    return project


_INSTALL = {
    "uv.lock": "with `uv sync --locked` from uv.lock",
    "poetry.lock": "with `poetry sync` (Poetry 1: `poetry install --sync`) from poetry.lock",
}


def _drift(client: Any, tag: str, lock: str) -> list[dict[str, Any]]:
    """idna moved (high: the lock holds 3.10) and mcp 2 is extra (medium)."""
    site_layer = layers_of(client, tag)[1]

    def where(name: str, version: str) -> dict[str, str]:
        return {
            "version": version,
            "location": SITE,
            "metadata_path": f"{SITE}/{dist_info(name, version)}/METADATA",
            "layer": site_layer,
        }

    return [
        {
            "rule_id": "AG110",
            "title": "Installed packages drift from the lock",
            "severity": "high",
            "confidence": "high",
            "message": f"idna is locked at 3.10 in {lock} but image {tag} has 3.11 in {SITE}.",
            "locations": [
                {"path": where("idna", "3.11")["metadata_path"], "layer": site_layer},
                {"path": lock},
            ],
            "evidence": {
                "package": "idna",
                "drift": "other-version",
                "locked": ["3.10"],
                "markers": [None],
                "installed": [where("idna", "3.11")],
            },
            "fix": {
                "description": f"Rebuild the image {_INSTALL[lock]} so idna is 3.10; if the "
                "new version is wanted, re-run `agentguard lock` and review it.",
                "safe": False,
                "snippet": "idna==3.10",
            },
            "ambiguous": False,
            "suppressed": None,
        },
        {
            "rule_id": "AG110",
            "title": "Installed packages drift from the lock",
            "severity": "medium",
            "confidence": "high",
            "message": f"mcp is installed in image {tag} (2.3.0 in {SITE}) but the lock does "
            "not list it.",
            "locations": [{"path": where("mcp", "2.3.0")["metadata_path"], "layer": site_layer}],
            "evidence": {
                "package": "mcp",
                "drift": "extra",
                "locked": [],
                "installed": [where("mcp", "2.3.0")],
                "installer_tooling": False,
            },
            "fix": {
                "description": "Remove mcp from the image, or add it to the project's "
                "requirements and re-run `agentguard lock`.",
                "safe": False,
            },
            "ambiguous": False,
            "suppressed": None,
        },
    ]


@pytest.mark.parametrize("kind", ["uv", "poetry"])
def test_an_image_is_compared_with_the_project_s_own_lock(
    kind: str,
    docker_client: Any,
    images: dict[str, str],
    uv_project: Path,
    poetry_project: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    project = uv_project if kind == "uv" else poetry_project
    lock = "uv.lock" if kind == "uv" else "poetry.lock"
    monkeypatch.chdir(project)

    same = report_of(inspect_cli(images["same"], "--format", "json"))
    assert f"compared with {lock} (found in the current directory)" in same["notes"]
    assert same["provenance"]["inputs"]["lock"]["path"] == lock
    assert findings_of(same, "AG110") == []

    result = inspect_cli(images["moved"], "--format", "json")
    moved = report_of(result)
    assert moved["complete"] is True
    assert findings_of(moved, "AG110") == _drift(docker_client, images["moved"], lock)
    assert result.exit_code == 1
