"""Shared fixtures: a real Docker engine, a local wheel index."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.wheelhouse import build_wheel, write_simple_index

# The fixtures are inputs (a project's own tests/test_*.py among them), never tests to run.
collect_ignore_glob = ["fixtures/*"]

SCHEMAS = Path(__file__).resolve().parent / "schemas"
PACKAGE_SCHEMAS = Path(__file__).resolve().parent.parent / "agentguard" / "schemas"


@pytest.fixture(scope="session", autouse=True)
def per_user_folders_of_the_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """``inspect DIR`` keeps a content cache and its key in per-user folders by default:
    the suite's runs use folders of their own, never the runner's."""
    base = tmp_path_factory.mktemp("per-user")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_CONFIG_HOME", str(base / "config"))
        mp.setenv("XDG_CACHE_HOME", str(base / "cache"))
        mp.delenv("AGENTGUARD_CACHE_KEY", raising=False)
        yield


@pytest.fixture(scope="session", autouse=True)
def json_reports_follow_the_schema() -> Iterator[None]:
    """Every JSON report built in this process is validated against the published schema
    (agentguard/schemas/report-1.json); child processes are checked by their helpers."""
    from agentguard.report import json_out
    from tests.report_schema import validate_json_text, validate_report

    build, render = json_out.report_to_json, json_out.render_json

    def checked_build(report: Any) -> Any:
        doc = build(report)
        validate_report(doc)
        return doc

    def checked_render(report: Any) -> str:
        text = render(report)
        validate_json_text(text)
        return text

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(json_out, "report_to_json", checked_build)
        mp.setattr(json_out, "render_json", checked_render)
        yield


@pytest.fixture(scope="session")
def docker_client() -> Iterator[Any]:
    """A client for the real engine at DOCKER_HOST. Fails (never skips) when it is missing."""
    import docker

    try:
        client = docker.from_env(timeout=120)
        client.ping()
    except Exception as exc:
        pytest.fail(
            f"the Docker engine is not reachable ({exc}); start one with "
            '`eval "$(scripts/start-dockerd /tmp/agentguard-docker)"` (scripts/test does this)'
        )
    yield client
    client.close()


@pytest.fixture(scope="session")
def sarif_schema() -> dict[str, Any]:
    import json

    path = SCHEMAS / "sarif-schema-2.1.0.json"
    if not path.is_file():
        pytest.fail(f"SARIF schema not found at {path} (it is vendored in tests/schemas)")
    return dict(json.loads(path.read_text()))


@pytest.fixture()
def isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv("AGENTGUARD_CACHE_DIR", str(cache))
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv-cache"))
    # the key that seals the lock's fix-set answers: this test's own, not the user's
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("AGENTGUARD_CACHE_KEY", raising=False)
    return cache


@pytest.fixture()
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Per-user folders of this test alone (the key file, the default content cache of
    ``inspect``), and one process (no forked readers): what is parsed is seen here."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("AGENTGUARD_CACHE_DIR", raising=False)
    monkeypatch.delenv("AGENTGUARD_CACHE_KEY", raising=False)
    monkeypatch.setenv("AGENTGUARD_JOBS", "1")
    return tmp_path


@pytest.fixture()
def agent_index(tmp_path: Path) -> dict[str, Any]:
    """A local index that replays the incident with small real wheels.

    - ``mcp`` 0.9.0, 1.0.0, 1.5.0, 2.0.0, 2.1.0 (majors 0.9, 1 and 2 released)
    - ``claude-agent-sdk`` 0.2.95 requires ``mcp>=1.0`` (unbounded: admits 1 and 2)
    - ``claude-agent-sdk`` 0.2.189 requires ``mcp<3,>=1.0`` (capped, still admits 1 and 2)
    - ``claude-agent-sdk`` 0.2.100 requires ``mcp<2,>=1.5`` (one major)
    - every SDK requires ``httpx-lite>=1.0``, which requires ``typing-x>=1`` (1.0.0 and
      2.0.0 released: the long tail)
    """
    wheels = tmp_path / "wheels"
    for v in ("0.9.0", "1.0.0", "1.5.0", "2.0.0", "2.1.0"):
        build_wheel(wheels, "mcp", v)
    build_wheel(wheels, "claude-agent-sdk", "0.2.95", ["mcp>=1.0", "httpx-lite>=1.0"])
    build_wheel(wheels, "claude-agent-sdk", "0.2.100", ["mcp<2,>=1.5", "httpx-lite>=1.0"])
    build_wheel(wheels, "claude-agent-sdk", "0.2.189", ["mcp<3,>=1.0", "httpx-lite>=1.0"])
    build_wheel(wheels, "httpx-lite", "1.0.0", ["typing-x>=1"])
    build_wheel(wheels, "typing-x", "1.0.0")
    build_wheel(wheels, "typing-x", "2.0.0")
    url = write_simple_index(wheels, tmp_path / "simple")
    return {"url": url, "wheels": wheels, "root": tmp_path}
