"""The smoke run's deadline against children that fight it: a stdio server that never reads
its stdin and floods it with requests (a blocking reply would wait on the full pipe past
every deadline), more hanging servers than the pool has threads (a queued server got its
time again when a thread got to it), and children that write without end (the output was
kept whole in memory, a server's stderr on disk, then read whole). Real wheels from a local
folder and the real CLI in a subprocess, or the child runner itself (no network)."""

from __future__ import annotations

import json
import os
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from agentguard.facts.agents import McpServer
from agentguard.smoke.proc import run
from agentguard.smoke.stdio import start_server
from tests.smoke.test_smoke_deadline import DEADLINE, MARGIN, _by, _cut, _lock, _smoke_findings
from tests.wheelhouse import build_wheel

# reads initialize, then never its stdin again: writes requests of its own without end
FLOOD = """\
import json, sys
sys.stdin.readline()
ask = json.dumps({"jsonrpc": "2.0", "id": "r", "method": "roots/list"}) + "\\n"
while True:
    sys.stdout.write(ask)
    sys.stdout.flush()
"""
HANG = "import time\nwhile True:\n    time.sleep(1)\n"


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheels")
    files = {"flood_server/__init__.py": "", "flood_server/__main__.py": FLOOD}
    files |= {"hang_server/__init__.py": "", "hang_server/__main__.py": HANG}
    build_wheel(out, "hostile-servers", "1.0.0", files=files)
    return out


def _project(root: Path, servers: dict[str, Any]) -> Path:
    (root / "bot").mkdir(parents=True)
    (root / "bot" / "__init__.py").write_text("")
    (root / "pyproject.toml").write_text(
        '[project]\nname = "bot"\nversion = "0.1.0"\nrequires-python = ">=3.10"\n'
        'dependencies = ["hostile-servers==1.0.0"]\n'
    )
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": servers}, indent=2))
    return root


def test_a_server_that_never_reads_its_stdin_does_not_hold_the_run_past_its_timeout(
    tmp_path: Path, folder: Path
) -> None:
    root = _project(
        tmp_path / "p", {"flood": {"command": "python", "args": ["-m", "flood_server"]}}
    )
    code, report, took, stderr = _lock(root, folder, "--smoke", "--timeout", "12")
    assert took < 12 + MARGIN, took  # (it hung until killed: the reply to its requests blocked)
    assert code == 3, stderr
    _cut(_by(report)[("mcp-server", "flood (.mcp.json)")], "12 s, --timeout")
    assert _smoke_findings(report) == []


def test_servers_queued_behind_others_end_by_the_runs_timeout_too(
    tmp_path: Path, folder: Path
) -> None:
    servers = {f"hang{i}": {"command": "python", "args": ["-m", "hang_server"]} for i in range(9)}
    root = _project(tmp_path / "p", servers)
    code, report, took, stderr = _lock(root, folder, "--smoke", "--timeout", "15")
    assert took < 15 + MARGIN, took  # (three rounds of the pool's threads: 3 x 15 s)
    assert code == 3, stderr
    by = _by(report)
    for i in range(9):
        _cut(by[("mcp-server", f"hang{i} (.mcp.json)")], "15 s, --timeout")
    assert _smoke_findings(report) == []
    assert not [s for s in report["sources"] if s["kind"] == "mcp-server"
                and s.get("error_code") != DEADLINE]  # fmt: skip


WRITE = "import os, sys\nfd = int(sys.argv[1])\nb = b'x' * 1048576\nfor _ in range(200):\n    os.write(fd, b)\n"


def test_a_child_that_writes_without_end_is_not_kept_in_memory(tmp_path: Path) -> None:
    script = tmp_path / "write.py"
    script.write_text(WRITE + "os.write(fd, b'\\nlast line\\n')\n")
    tracemalloc.start()
    try:
        ran = run([sys.executable, str(script), "1"], cwd=str(tmp_path), env=dict(os.environ),
                  timeout=60)  # fmt: skip
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert ran.code == 0 and ran.output.endswith("last line\n")
    assert peak < 16 * 1024 * 1024, peak  # (200 MB were kept, then joined)


def test_a_server_that_writes_its_stderr_without_end_fills_neither_disk_nor_memory(
    tmp_path: Path,
) -> None:
    scratch = tmp_path / "scratch"
    (scratch / "tmp").mkdir(parents=True)
    script = tmp_path / "write.py"
    script.write_text(WRITE + "os.write(fd, b'\\nerror: FANCY_TOKEN is not set\\n')\n")
    server = McpServer("w", ".mcp.json", 1, ".mcp.json", "stdio", "python", ("-m", "w"))
    began = time.monotonic()
    tracemalloc.start()
    try:
        probe = start_server(server, [sys.executable, str(script), "2"], str(scratch),
                             str(scratch / "tmp"), 60)  # fmt: skip
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert time.monotonic() - began < 60
    assert peak < 16 * 1024 * 1024, peak  # (the file of 200 MB was read whole)
    assert probe.output[-1] == "error: FANCY_TOKEN is not set", probe.output
    assert probe.status == "needs-credentials", probe
    # nothing of it left in the scratch folder (its stderr was a file there)
    assert sorted(p.name for p in scratch.iterdir()) == ["home", "tmp"]
