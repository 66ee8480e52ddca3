"""A relative path in the resolver's environment means the folder agentguard was started
in, not the scratch folder or project copy the resolver runs in. Real uv, local file index."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentguard.lock.backend import uv_binary
from agentguard.lock.children import resolver_env
from tests.lock.helpers import run_json, write_project
from tests.wheelhouse import build_wheel, write_simple_index

pytestmark = pytest.mark.usefixtures("isolated_cache")


def test_relative_paths_are_made_absolute_against_the_start_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    given = {
        "UV_CACHE_DIR": "uv-cache",
        "UV_CONFIG_FILE": "conf/uv.toml",
        "PIP_CACHE_DIR": "/var/pip-cache",
        "UV_INDEX_URL": "simple",  # not a path uv reads from its folder: left as given
    }
    assert resolver_env(given) == {
        "UV_CACHE_DIR": str(tmp_path / "uv-cache"),
        "UV_CONFIG_FILE": str(tmp_path / "conf" / "uv.toml"),
        "PIP_CACHE_DIR": "/var/pip-cache",
        "UV_INDEX_URL": "simple",
    }
    assert given["UV_CACHE_DIR"] == "uv-cache"  # a copy: the caller's mapping is not changed


def _relative_cache_env() -> dict[str, str]:
    env = dict(os.environ)
    env["UV_CACHE_DIR"] = "relative-uv-cache"  # the user's, relative to where they run
    return env


def _cached(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def test_a_relative_uv_cache_dir_stays_where_agentguard_was_started_for_uv_lock(
    tmp_path: Path,
) -> None:
    wheels = tmp_path / "wheels"
    build_wheel(wheels, "mcp-lite", "1.0.0")
    url = write_simple_index(wheels, tmp_path / "simple")
    project = tmp_path / "bot"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[project]\nname = "bot"\nversion = "0.1.0"\nrequires-python = ">=3.10"\n'
        'dependencies = ["mcp-lite>=1"]\n\n[tool.uv]\npackage = false\n\n'
        f'[[tool.uv.index]]\nname = "local"\nurl = "{url}"\ndefault = true\n',
        encoding="utf-8",
    )
    subprocess.run(
        [uv_binary(), "lock", "--python", sys.executable],
        cwd=project,
        capture_output=True,
        check=True,
        timeout=300,
    )
    started_in = tmp_path / "here"
    started_in.mkdir()
    code, report, _ = run_json(
        "lock", str(project), "--upgrade", cwd=started_in, env=_relative_cache_env()
    )
    assert code == 0, report
    assert report["provenance"]["inputs"]["lock_file"] == "uv.lock"  # `uv lock` on a copy ran
    # uv's cache is where the user's relative path names it, so the next run is warm.
    assert "CACHEDIR.TAG" in _cached(started_in / "relative-uv-cache"), report
    assert sorted(p.name for p in project.iterdir()) == ["pyproject.toml", "uv.lock"]


def test_a_relative_uv_cache_dir_stays_where_agentguard_was_started_for_uv_pip_compile(
    tmp_path: Path, agent_index: dict[str, Any]
) -> None:
    project = write_project(tmp_path / "bot", ["claude-agent-sdk==0.2.189"])
    started_in = tmp_path / "here"
    started_in.mkdir()
    _, report, _ = run_json(
        "lock",
        str(project),
        "--index-url",
        agent_index["url"],
        cwd=started_in,
        env=_relative_cache_env(),
    )
    assert (project / "requirements.lock").is_file(), report
    assert "CACHEDIR.TAG" in _cached(started_in / "relative-uv-cache"), report
