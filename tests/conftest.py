"""Shared fixtures: a real Docker engine, a local wheel index."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.wheelhouse import build_wheel, write_simple_index

SCHEMAS = Path(__file__).resolve().parent.parent.parent / "shared" / "schemas"


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
        pytest.fail(f"SARIF schema not found at {path} (shared/ sits beside the project)")
    return dict(json.loads(path.read_text()))


@pytest.fixture()
def isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv("AGENTGUARD_CACHE_DIR", str(cache))
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv-cache"))
    return cache


@pytest.fixture()
def agent_index(tmp_path: Path) -> dict[str, Any]:
    """A local index: an SDK whose range on a protocol library spans majors 1 and 2.

    - ``proto`` 0.9.0, 1.0.0, 1.5.0, 2.0.0, 2.1.0
    - ``agent-sdk`` 1.0.0 requires ``proto>=1.0`` (unbounded: majors 1 and 2)
    - ``agent-sdk`` 1.1.0 requires ``proto>=1.0,<3`` (majors 1 and 2)
    - ``agent-sdk`` 1.2.0 requires ``proto>=1.5,<2`` (one major)
    - ``helper`` 1.0.0 requires ``typing-x>=1`` ; typing-x 1.0.0, 2.0.0 (the long tail)
    """
    wheels = tmp_path / "wheels"
    for v in ("0.9.0", "1.0.0", "1.5.0", "2.0.0", "2.1.0"):
        build_wheel(wheels, "proto", v)
    build_wheel(wheels, "agent-sdk", "1.0.0", ["proto>=1.0", "helper>=1.0"])
    build_wheel(wheels, "agent-sdk", "1.1.0", ["proto<3,>=1.0", "helper>=1.0"])
    build_wheel(wheels, "agent-sdk", "1.2.0", ["proto<2,>=1.5", "helper>=1.0"])
    build_wheel(wheels, "helper", "1.0.0", ["typing-x>=1"])
    build_wheel(wheels, "typing-x", "1.0.0")
    build_wheel(wheels, "typing-x", "2.0.0")
    url = write_simple_index(wheels, tmp_path / "simple")
    return {"url": url, "wheels": wheels, "root": tmp_path}
