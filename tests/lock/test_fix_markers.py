"""Where a first fix applies: a cap from a parent that only some Pythons install holds where
that parent is installed, so the caps over one pin never overlap without being one cap.

Modelled on fast-agent-mcp (issue #26's field check): its newest releases need Python 3.12,
so the universal lock forks. Below 3.12 it pins fast-agent-mcp 0.2.36 and ``mcp==1.10.1``;
from 3.12 a newer release, ``mcp==2.3.0`` and ``fastmcp-slim==4.1.3`` (installed there
only). uvicorn is pinned once; three parents span it. The cap from ``mcp==1.10.1`` was
offered below 3.12 (``uvicorn>=0.34,<0.35``, the major it was built for) and the one from
fastmcp-slim everywhere (``uvicorn>=0.54,<0.55``): applied together, no Python 3.11
resolution exists, and agentguard's first fixes did not install. Small real wheels on a
local index, the real resolver.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hostile.index_server import serving
from tests.lock.helpers import findings, run_json, write_project
from tests.wheelhouse import build_wheel

pytestmark = pytest.mark.usefixtures("isolated_cache")

TIMES = {
    "corn-0.34.0": "2025-01-10T00:00:00Z",
    "corn-0.40.0": "2025-09-01T00:00:00Z",
    "corn-0.54.0": "2026-05-01T00:00:00Z",
    "mcpx-1.10.1": "2025-06-01T00:00:00Z",
    "mcpx-2.3.0": "2026-08-01T00:00:00Z",
    "slim-4.1.3": "2026-10-01T00:00:00Z",
    "fa-0.2.36": "2025-06-15T00:00:00Z",
    "fa-0.6.0": "2026-10-15T00:00:00Z",
}


def test_caps_from_a_parent_one_fork_installs_hold_in_that_fork_and_resolve_together(
    tmp_path: Path,
) -> None:
    wheels = tmp_path / "wheels"
    for v in ("0.34.0", "0.40.0", "0.54.0"):
        build_wheel(wheels, "corn", v)
    build_wheel(wheels, "mcpx", "1.10.1", ["corn>=0.23"])
    build_wheel(wheels, "mcpx", "2.3.0", ["corn>=0.31"], requires_python=">=3.12")
    build_wheel(wheels, "slim", "4.1.3", ["corn>=0.35"], requires_python=">=3.12")
    build_wheel(wheels, "fa", "0.2.36", ["mcpx==1.10.1"])
    build_wheel(wheels, "fa", "0.6.0", ["slim==4.1.3", "mcpx>=2"], requires_python=">=3.12")
    with serving(wheels) as server:
        server.upload_times = {p.name: TIMES[p.name.split("-py3")[0]] for p in wheels.glob("*.whl")}
        project = write_project(tmp_path / "bot", ["fa"])
        _, report, _ = run_json("lock", str(project), "--index-url", server.url)
        lock = (project / "requirements.lock").read_text()
        assert "corn==0.54.0 \\" in lock  # one pin, both forks
        assert 'slim==4.1.3 ; python_full_version >= "3.12"' in lock
        spans = sorted(
            (f["evidence"]["parent"], f["evidence"]["parent_version"])
            for f in findings(report, "AG101")
            if f["evidence"]["child"] == "corn"
        )
        assert spans == [("mcpx", "1.10.1"), ("mcpx", "2.3.0"), ("slim", "4.1.3")]
        offered = sorted(
            f["fix"]["snippet"]
            for f in findings(report, "AG101")
            if f["evidence"]["child"] == "corn" and "snippet" in f["fix"]
        )
        # the slim span caps where slim is installed, as mcp 2's does: one cap there
        assert offered == [
            "corn>=0.34,<0.35 ; python_full_version < '3.12'",
            "corn>=0.54,<0.55 ; python_full_version >= '3.12'",
            "corn>=0.54,<0.55 ; python_full_version >= '3.12'",
        ]
        assert {
            f["evidence"]["fix_set"]
            for f in findings(report, "AG101")
            if f["evidence"]["child"] == "corn"
        } == {"resolves"}

        fresh = write_project(tmp_path / "fresh", ["fa", *sorted(set(offered))])
        _, again, _ = run_json(
            "lock", str(fresh), "--index-url", server.url, "--allow-major", "corn"
        )
        assert again["complete"] is True, again["sources"]
        text = (fresh / "requirements.lock").read_text()
        assert 'corn==0.34.0 ; python_full_version < "3.12"' in text
        assert 'corn==0.54.0 ; python_full_version >= "3.12"' in text
