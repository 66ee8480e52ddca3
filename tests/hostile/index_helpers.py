"""Shared by the hostile-index tests: small real wheels, running `agentguard lock` against a
loopback index, and reading what it reported."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentguard.lock import index as ix
from tests.hostile.index_server import Request
from tests.hostile.promises import Run, check_failed_source, run_agentguard
from tests.lock.helpers import write_project
from tests.wheelhouse import build_wheel

UV_FAST = {"UV_HTTP_RETRIES": "0", "UV_HTTP_TIMEOUT": "5"}
PASSWORD = "S3cret-Pass-8492"
SDK_WHEEL = "agent_sdk-1.0.0-py3-none-any.whl"


@pytest.fixture()
def wheels(tmp_path: Path) -> Path:
    folder = tmp_path / "wheels"
    build_wheel(folder, "mcp", "1.0.0")
    build_wheel(folder, "mcp", "2.0.0")
    build_wheel(folder, "agent-sdk", "1.0.0", ["mcp>=1"])  # admits two majors: AG101
    return folder


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    return write_project(tmp_path / "bot", ["agent-sdk==1.0.0"])


def lock(project: Path, index_url: str, *extra: str, env: dict[str, str] | None = None) -> Run:
    run = run_agentguard(
        "lock",
        str(project),
        "--index-url",
        index_url,
        "--format",
        "json",
        *extra,
        env={**UV_FAST, **(env or {})},
        timeout=120,
    )
    run.check_no_crash()
    return run


def report_of(run: Run) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(run.stdout)
    return data


def failed_sources(report: dict[str, Any]) -> list[dict[str, Any]]:
    out = [s for s in report["sources"] if s["status"] == "failed"]
    for s in out:
        check_failed_source(s)
    return out


def every_file_text(folder: Path) -> str:
    return "\n".join(
        p.read_bytes().decode("utf-8", "replace") for p in sorted(folder.rglob("*")) if p.is_file()
    )


def only_for_agentguard(hook: Any) -> Any:
    def page_hook(req: Request, page: dict[str, Any]) -> dict[str, Any]:
        return hook(page) if req.from_agentguard else page

    return page_hook


def assert_secret_nowhere(secret: str, run: Run, *folders: Path) -> None:
    assert secret not in run.stdout and secret not in run.stderr
    for folder in folders:
        assert secret not in every_file_text(folder), folder


def raised_in_a_fresh_thread(call: Callable[[], object], wait: float = 60) -> BaseException | None:
    """What ``call`` raised (None: nothing), run in a fresh thread: a fresh connection pool,
    as a new run has (no kept-alive connection of another test)."""
    got: list[BaseException] = []

    def run() -> None:
        try:
            call()
        except BaseException as exc:
            got.append(exc)

    t = threading.Thread(target=run)
    t.start()
    t.join(wait)
    return got[0] if got else None


def read_page(client: ix.IndexClient, name: str = "mcp", wait: float = 60) -> BaseException | None:
    """What reading ``name``'s page raised (None: read), in a fresh thread."""
    return raised_in_a_fresh_thread(lambda: client.project_page(name), wait)
