"""An MCP server's kept version (PyPI and npm) is held to the files the lock recorded, as the
Python lock holds its pins: an index that replaced a release's files (same version, other
content) is a failed source and nothing is re-pinned; an index that added a file to the
release (a new platform's wheel) is no change to refuse. (Before, the resolver was handed
the recorded hashes as preferences and kept them: "up to date" with files the index no
longer served.)"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from tests.lock.helpers import run_json
from tests.wheelhouse import build_wheel, write_simple_index

pytestmark = pytest.mark.usefixtures("isolated_cache")


def _sha(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture()
def served(tmp_path: Path) -> tuple[Path, Path]:
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    build_wheel(wheels, "mcp-server-demo", "2.0.0")
    write_simple_index(wheels, tmp_path / "simple")
    return wheels, tmp_path / "simple"


def _lock(project: Path, index: Path) -> tuple[int, dict[str, Any]]:
    code, report, _ = run_json("lock", str(project), "--index-url", index.as_uri())
    return code, report


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "agent"
    project.mkdir()
    launch = {"command": "uvx", "args": ["--from", "mcp-server-demo==2.0.0", "mcp-server-demo"]}
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"demo": launch}}) + "\n")
    return project


def test_a_release_whose_files_were_replaced_is_refused(
    tmp_path: Path, served: tuple[Path, Path]
) -> None:
    wheels, index = served
    project = _project(tmp_path)
    code, _ = _lock(project, index)
    assert code == 0
    before = (project / "mcp.lock.json").read_bytes()
    [old] = wheels.glob("mcp_server_demo-2.0.0-*.whl")
    recorded = _sha(old)
    old.unlink()
    build_wheel(wheels, "mcp-server-demo", "2.0.0", files={"mcp_server_demo/more.py": "x = 1\n"})
    write_simple_index(wheels, index)
    code, report = _lock(project, index)
    assert code == 3
    [failed] = [s for s in report["sources"] if s["status"] == "failed"]
    assert {k: failed[k] for k in ("kind", "name", "error_code", "reason")} == {
        "kind": "index",
        "name": "mcp-server-demo (.mcp.json:1)",
        "error_code": "hash-not-on-index",
        "reason": "mcp-server-demo==2.0.0: the index lists no file with the hashes "
        "mcp.lock.json recorded for this version (the release's files were replaced); "
        "nothing was re-pinned",
    }
    assert (project / "mcp.lock.json").read_bytes() == before
    assert json.loads(before)["servers"][0]["hashes"] == [recorded]


def test_a_file_added_to_a_release_is_recorded(tmp_path: Path, served: tuple[Path, Path]) -> None:
    wheels, index = served
    project = _project(tmp_path)
    assert _lock(project, index)[0] == 0
    build_wheel(wheels, "mcp-server-demo", "2.0.0", tag="py311-none-any")
    write_simple_index(wheels, index)
    code, report = _lock(project, index)
    assert code == 0, report["sources"]
    [entry] = json.loads((project / "mcp.lock.json").read_text())["servers"]
    assert entry["hashes"] == sorted(_sha(p) for p in wheels.glob("mcp_server_demo-2.0.0-*.whl"))
    assert len(entry["hashes"]) == 2


def test_an_npm_version_served_with_another_tarball_is_refused(tmp_path: Path) -> None:
    from tests.lock.npm_registry import NpmRegistry, serve

    name = "@acme/tracker-mcp"
    project = tmp_path / "agent"
    project.mkdir()
    launch = {"command": "npx", "args": ["-y", f"{name}@1.4.2"]}
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"tracker": launch}}) + "\n")
    with serve(NpmRegistry({name: ["1.4.2"]})) as registry:
        code, _, _ = run_json("lock", str(project), "--npm-registry", registry.url)
        assert code == 0
        before = (project / "mcp.lock.json").read_bytes()
        registry.replaced.add((name, "1.4.2"))
        code, report, _ = run_json("lock", str(project), "--npm-registry", registry.url)
    assert code == 3
    [failed] = [s for s in report["sources"] if s["status"] == "failed"]
    assert {k: failed[k] for k in ("kind", "name", "error_code", "reason")} == {
        "kind": "npm-registry",
        "name": f"{name} (.mcp.json:1)",
        "error_code": "npm-integrity-changed",
        "reason": f"{name}@1.4.2: the registry's integrity for this version is not the one "
        "mcp.lock.json recorded (the version was replaced); nothing was re-pinned",
    }
    assert (project / "mcp.lock.json").read_bytes() == before
