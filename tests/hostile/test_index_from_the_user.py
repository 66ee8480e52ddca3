"""A lock file names an index; agentguard contacts only the ones the user configured
(loopback only).

A committed lock is content of the pull request under review: its `# index-urls:` header,
the registry and the wheel URLs of a uv.lock. Each test serves two indexes on 127.0.0.1,
the configured one and one planted in the lock, and proves the planted one never sees a
request (from agentguard or from the resolver), while the report lists it as a skipped
source with the reason.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentguard.lock.backend import uv_binary
from tests.hostile.index_helpers import UV_FAST, failed_sources, lock, project, report_of, wheels
from tests.hostile.index_server import serving
from tests.hostile.promises import run_agentguard
from tests.wheelhouse import build_wheel

pytestmark = pytest.mark.usefixtures("isolated_cache")
__all__ = ["project", "wheels"]  # fixtures

HOW = (
    "pass it with --index-url, set UV_INDEX or PIP_INDEX_URL, or list its host in "
    "AGENTGUARD_INDEX_HOSTS"
)


def _skipped(url: str, where: str) -> dict[str, Any]:
    return {
        "kind": "index",
        "name": url,
        "status": "skipped",
        "reason": f"named by {where}, not an index configured for this run: not contacted "
        f"(to read it, {HOW})",
    }


@pytest.mark.parametrize(
    ("backend", "variable"), [("uv", "UV_DEFAULT_INDEX"), ("pip-tools", "PIP_INDEX_URL")]
)
def test_a_planted_index_urls_header_is_reported_not_contacted(
    wheels: Path, project: Path, backend: str, variable: str
) -> None:
    with serving(wheels) as good, serving(wheels) as planted:
        first = lock(project, good.url, "--backend", backend)
        assert first.code == 1, report_of(first)["sources"]  # AG101, complete
        req = project / "requirements.lock"
        text = req.read_text()
        assert f"# index-urls: {good.url}" in text
        assert f"--index-url {good.url}\n" in text
        # the pull request names its own index in the header and in the option line
        text = re.sub(r"(?m)^# index-urls: .*$", f"# index-urls: {planted.url}", text, count=1)
        planted_lines = f"--index-url {planted.url}\n--find-links {planted.url}/../links/\n"
        req.write_text(text.replace(f"--index-url {good.url}\n", planted_lines))
        # the index from uv's own environment, as a pipeline sets it (no --index-url)
        again = run_agentguard(
            "lock",
            str(project),
            "--backend",
            backend,
            "--format",
            "json",
            env={**UV_FAST, variable: good.url},
        )
        again.check_no_crash()
        planted_log = list(planted.log)
        good_log = [r for r, _ in good.log if r.from_agentguard]
    report = report_of(again)
    assert planted_log == []
    assert good_log  # the prefetch and the analysis went to the configured index
    assert again.code == 1 and failed_sources(report) == []
    assert [s for s in report["sources"] if s["status"] == "skipped"] == [
        _skipped(planted.url, "requirements.lock")
    ]
    assert f"# index-urls: {good.url}" in req.read_text()  # rewritten from the configured one


def _uv_project(root: Path, index: str) -> Path:
    project = root / "bot"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[project]\nname = "bot"\nversion = "0.1.0"\nrequires-python = ">=3.10"\n'
        'dependencies = ["agent-sdk==1.0.0"]\n\n[tool.uv]\npackage = false\n\n'
        f'[[tool.uv.index]]\nname = "corp"\nurl = "{index}"\ndefault = true\n',
        encoding="utf-8",
    )
    subprocess.run(
        [uv_binary(), "lock", "--python", sys.executable],
        cwd=project,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
        env={**__import__("os").environ, **UV_FAST},
    )
    return project


@pytest.fixture()
def sdk_wheels(tmp_path: Path) -> Path:
    folder = tmp_path / "sdk-wheels"
    build_wheel(folder, "mcp", "1.0.0")
    build_wheel(folder, "agent-sdk", "1.0.0", ["mcp>=1"])
    return folder


def test_a_uv_lock_naming_another_registry_is_not_read(tmp_path: Path, sdk_wheels: Path) -> None:
    with serving(sdk_wheels) as good, serving(sdk_wheels) as planted:
        project = _uv_project(tmp_path, good.url)
        good_port, planted_port = (
            good.url.split(":")[2].split("/")[0],
            planted.url.split(":")[2].split("/")[0],
        )
        lock_file = project / "uv.lock"
        lock_file.write_text(
            lock_file.read_text().replace(f"127.0.0.1:{good_port}", f"127.0.0.1:{planted_port}")
        )
        run = run_agentguard(
            "lock",
            "--check",
            str(project),
            "--format",
            "json",
            env={**UV_FAST, "UV_DEFAULT_INDEX": good.url},
        )
        run.check_no_crash()
        planted_log = list(planted.log)
    report = report_of(run)
    assert planted_log == []
    skipped = [s for s in report["sources"] if s["status"] == "skipped"]
    assert skipped[0] == _skipped(planted.url, "uv.lock")
    assert sorted(s["name"] for s in skipped[1:]) == ["agent-sdk==1.0.0", "mcp==1.0.0"]
    assert all(
        s["kind"] == "metadata"
        and s["reason"]
        == f"uv.lock names its wheel on 127.0.0.1:{planted_port}, and its index is not "
        f"configured for this run: not read ({HOW})"
        for s in skipped[1:]
    )
    assert failed_sources(report) == []


@pytest.mark.parametrize("configured_by", ["environment", "flag"])
def test_a_wheel_a_uv_lock_places_on_another_host_is_read_from_the_configured_index(
    tmp_path: Path, sdk_wheels: Path, configured_by: str
) -> None:
    build_wheel(sdk_wheels, "mcp", "2.0.0")  # released after the lock: AG101 (mcp>=1)
    with serving(sdk_wheels) as good, serving(sdk_wheels) as planted:
        project = _uv_project(tmp_path, good.url)
        good_port = good.url.split(":")[2].split("/")[0]
        planted_host = planted.url.split("/")[2]
        lock_file = project / "uv.lock"
        lock_file.write_text(
            re.sub(
                rf'url = "http://127\.0\.0\.1:{good_port}/files/',
                f'url = "http://{planted_host}/files/',
                lock_file.read_text(),
            )
        )
        assert planted_host in lock_file.read_text()
        by_flag = configured_by == "flag"
        run = run_agentguard(
            "lock",
            "--check",
            str(project),
            *(["--index-url", good.url] if by_flag else []),
            "--format",
            "json",
            env={**UV_FAST, **({} if by_flag else {"UV_DEFAULT_INDEX": good.url})},
        )
        run.check_no_crash()
        planted_log = list(planted.log)
        good_files = [r.path for r, _ in good.log if r.from_agentguard and r.is_file]
    report = report_of(run)
    assert planted_log == []
    assert good_files  # the wheels' metadata came from where the configured index says
    assert failed_sources(report) == []
    assert [s for s in report["sources"] if s["status"] != "ok"] == []
    assert [f["rule_id"] for f in report["findings"]] == ["AG101"]
    assert report["facts"]["unread_edges"] == []


def test_a_wheel_the_configured_index_does_not_list_is_a_failed_source_not_a_fetch(
    tmp_path: Path, sdk_wheels: Path
) -> None:
    with serving(sdk_wheels) as good, serving(sdk_wheels) as planted:
        project = _uv_project(tmp_path, good.url)
        good_host, planted_host = good.url.split("/")[2], planted.url.split("/")[2]
        lock_file = project / "uv.lock"
        forged = "sha256:" + hashlib.sha256(b"a wheel the index never served").hexdigest()
        lines = []
        for line in lock_file.read_text().splitlines(keepends=True):
            if f"{good_host}/files/mcp-1.0.0-py3-none-any.whl" in line:
                line = line.replace(good_host, planted_host)
                line = re.sub(r'hash = "sha256:[0-9a-f]{64}"', f'hash = "{forged}"', line)
            lines.append(line)
        lock_file.write_text("".join(lines))
        assert forged in lock_file.read_text()
        run = run_agentguard(
            "lock",
            "--check",
            str(project),
            "--format",
            "json",
            env={**UV_FAST, "UV_DEFAULT_INDEX": good.url},
        )
        run.check_no_crash()
        planted_log = list(planted.log)
    report = report_of(run)
    assert planted_log == []
    assert run.code == 3
    assert [
        (s["kind"], s["name"], s["error_code"], s["reason"]) for s in failed_sources(report)
    ] == [
        (
            "metadata",
            "mcp==1.0.0",
            "index-not-found",
            f"mcp-1.0.0-py3-none-any.whl: {good.url}/ lists no file of that name with the sha256 "
            "the lock gives",
        )
    ]
