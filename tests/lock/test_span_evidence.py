"""AG101's first fix keeps the major the parent was built against, by upload times.

Modelled on mcp-agent 0.2.6 (uploaded 2025-12-05, declares `mcp>=1.20.0` with no upper
bound); mcp 2.0.0 shipped 2026-07-28 without `mcp.server.fastmcp`, so with mcp 2
`from mcp_agent.app import MCPApp` fails. Small real wheels on a local index whose simple
JSON carries upload times; the real resolver (uv); the lock installed and imported.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentguard.lock.backend import uv_binary
from tests.hostile.index_server import serving
from tests.lock.helpers import findings, run_json, write_project
from tests.wheelhouse import build_wheel

pytestmark = pytest.mark.usefixtures("isolated_cache")

_FASTMCP = {"mcp/server/__init__.py": "", "mcp/server/fastmcp.py": "class FastMCP: ...\n"}
_UPLOADED = {
    "mcp-1.20.0": "2025-11-01T10:00:00.000000Z",
    "mcp-1.30.0": "2026-02-01T10:00:00.000000Z",
    "mcp_agent-0.2.6": "2025-12-05T21:10:46.181354Z",
    "mcp-2.0.0": "2026-07-28T13:45:28.853348Z",
    "mcp-2.3.0": "2026-10-01T10:00:00.000000Z",
}


def _wheels(folder: Path) -> None:
    for v in ("1.20.0", "1.30.0"):
        build_wheel(folder, "mcp", v, files=_FASTMCP)
    for v in ("2.0.0", "2.3.0"):  # mcp 2: mcp.server.fastmcp is gone
        build_wheel(folder, "mcp", v, files={"mcp/server/__init__.py": ""})
    build_wheel(
        folder,
        "mcp-agent",
        "0.2.6",
        ["mcp>=1.20.0"],
        files={"mcp_agent/app.py": "from mcp.server.fastmcp import FastMCP\nMCPApp = FastMCP\n"},
    )


def _imports(project: Path, tmp: Path) -> subprocess.CompletedProcess[str]:
    """Install the lock (hashes required) into a folder, then import the SDK from it."""
    target = tmp / "site"
    subprocess.run(
        [
            uv_binary(),
            "pip",
            "install",
            "--python",
            sys.executable,
            "--target",
            str(target),
            "--require-hashes",
            "--no-deps",
            "-r",
            str(project / "requirements.lock"),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return subprocess.run(
        [sys.executable, "-S", "-c", "from mcp_agent.app import MCPApp"],
        env={"PYTHONPATH": str(target)},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_first_fix_keeps_the_major_the_parent_predates_nothing_of(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    _wheels(wheels)
    with serving(wheels) as server:
        server.upload_times = {
            p.name: _UPLOADED[p.name.split("-py3")[0]] for p in wheels.glob("*.whl")
        }
        project = write_project(tmp_path / "bot", ["mcp-agent==0.2.6"])
        code, report, _ = run_json("lock", str(project), "--index-url", server.url)
        assert code == 1
        assert "mcp==2.3.0" in (project / "requirements.lock").read_text()
        assert "mcp.server.fastmcp" in _imports(project, tmp_path / "a").stderr  # the incident
        [span] = [f for f in findings(report, "AG101") if f["evidence"]["child"] == "mcp"]
        assert span["fix"] == {
            "description": "Add `mcp>=1.20.0,<2` to your requirements, then re-lock with "
            "`agentguard lock --allow-major mcp` (the lock moves mcp off 2.3.0, a major crossing "
            "the re-lock gate stops otherwise): mcp-agent==0.2.6 was uploaded 2025-12-05, before "
            "mcp 2 first shipped (2026-07-28), so the newest mcp major it can have been built "
            "against is 1. Or `mcp>=2.0,<3` (the locked major) once your code and mcp-agent "
            "have been tested against mcp 2.",
            "safe": False,
            "snippet": "mcp>=1.20.0,<2",
        }
        assert span["evidence"]["uploaded"] == {
            "parent": "2025-12-05T21:10:46+00:00",
            "majors": {"1": "2025-11-01T10:00:00+00:00", "2": "2026-07-28T13:45:28+00:00"},
        }
        assert (span["evidence"]["built_for"], span["evidence"]["first_fix_basis"]) == (
            "1",
            "upload-times",
        )
        # The offline check reads the same evidence from pylock.toml: the same fix.
        _, checked, _ = run_json("lock", "--check", str(project))
        [again] = [f for f in findings(checked, "AG101") if f["evidence"]["child"] == "mcp"]
        assert again["fix"] == span["fix"]

        # Applied: the re-lock stops at the gate, and the gate's advice agrees with the fix
        # (no "add mcp<3": that would keep the broken major).
        write_project(project, ["mcp-agent==0.2.6", span["fix"]["snippet"]])
        code, report, _ = run_json("lock", str(project), "--index-url", server.url)
        assert code == 1
        [gate] = findings(report, "AG102")
        assert gate["fix"] == {
            "description": "The project's own requirement mcp<2,>=1.20.0 leaves out 2.3.0: the "
            "move to mcp 1 is what the requirements ask for. Re-run `agentguard lock "
            "--allow-major mcp` to write it, or change that requirement.",
            "safe": False,
            "snippet": "agentguard lock --allow-major mcp",
        }
        # The whole command the fix names writes the lock; the SDK installs and imports.
        code, report, _ = run_json(
            "lock", str(project), "--index-url", server.url, "--allow-major", "mcp"
        )
        assert code == 0, report["findings"]
        assert "mcp==1.30.0" in (project / "requirements.lock").read_text()
        done = _imports(project, tmp_path / "b")
        assert done.returncode == 0, done.stderr


def test_a_parent_uploaded_after_the_new_major_keeps_the_locked_one(tmp_path: Path) -> None:
    """The same range on a parent release that came out after mcp 2 shipped: it may have
    been built against mcp 2, so the locked major comes first (no gate to pass)."""
    wheels = tmp_path / "wheels"
    _wheels(wheels)
    with serving(wheels) as server:
        times = {p.name: _UPLOADED[p.name.split("-py3")[0]] for p in wheels.glob("*.whl")}
        times["mcp_agent-0.2.6-py3-none-any.whl"] = "2026-08-15T00:00:00.000000Z"
        server.upload_times = times
        project = write_project(tmp_path / "bot", ["mcp-agent==0.2.6"])
        _, report, _ = run_json("lock", str(project), "--index-url", server.url)
        [span] = [f for f in findings(report, "AG101") if f["evidence"]["child"] == "mcp"]
        assert span["fix"]["snippet"] == "mcp>=2.0,<3"
        assert span["fix"]["description"].startswith(
            "Cap mcp at the major you have tested: add `mcp>=2.0,<3` (the locked major; mcp 2 "
            "first shipped 2026-07-28, before mcp-agent==0.2.6 was uploaded (2026-08-15), so it "
            "may have been built against it) to your requirements, or `mcp>=1.20.0,<2` if your "
            "code was written against that major, then re-lock with `agentguard lock "
            "--allow-major mcp`"
        )


def _span(report: dict[str, Any]) -> dict[str, Any]:
    [span] = [f for f in findings(report, "AG101") if f["evidence"]["child"] == "mcp"]
    return span


@pytest.mark.network
def test_real_mcp_agent_first_fix_is_mcp_below_2_and_resolves_mcp_1(tmp_path: Path) -> None:
    project = write_project(tmp_path / "bot", ["mcp-agent==0.2.6"])
    _, report, _ = run_json("lock", str(project))
    span = _span(report)
    snippet = span["fix"]["snippet"]
    assert snippet.startswith("mcp>=") and snippet.endswith(",<2"), span["fix"]
    assert span["evidence"]["first_fix_basis"] == "upload-times"
    fresh = tmp_path / "fresh"  # a fresh lock with the fix: no gate to pass
    write_project(fresh, ["mcp-agent==0.2.6", snippet])
    _code, report, _ = run_json("lock", str(fresh))
    assert report["complete"] is True
    lines = (fresh / "requirements.lock").read_text().splitlines()
    [mcp] = [ln for ln in lines if ln.startswith("mcp==")]
    assert mcp.startswith("mcp==1."), mcp
