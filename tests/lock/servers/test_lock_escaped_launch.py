"""`agentguard lock` on a TypeScript launch whose package name is written with an escape
(`"evil\\x2dpkg"` is `evil-pkg` to node): the lock pins the package node runs, never the
package the escape-less spelling names (`evilpkg`, another package the registry serves).
The registry is the 127.0.0.1 test registry serving real tarballs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.lock.helpers import run_json
from tests.lock.npm_registry import NpmRegistry, integrity, serve, tarball

pytestmark = pytest.mark.usefixtures("isolated_cache")

SOURCE = 'export const cfg = { mcpServers: { tracker: { command: "npx", args: ["-y", "evil\\x2dpkg"] } } };\n'


def test_an_escaped_package_name_is_locked_as_node_reads_it(tmp_path: Path) -> None:
    project = tmp_path / "app"
    project.mkdir()
    (project / "mcp.ts").write_text(SOURCE)
    with serve(NpmRegistry({"evil-pkg": ["1.0.0"], "evilpkg": ["6.6.6"]})) as reg:
        code, report, _ = run_json("lock", str(project), "--npm-registry", reg.url)
        assert code == 0, report
        # agentguard's packument and tarball, then npm's packument (the tree): never evilpkg
        assert reg.requests == ["evil-pkg", "evil-pkg/-/evil-pkg-1.0.0.tgz", "evil-pkg"]
    [entry] = json.loads((project / "mcp.lock.json").read_text())["servers"]
    assert entry["launch"] == {"path": "mcp.ts", "line": 1, "server": "tracker"}
    assert (entry["package"], entry["version"], entry["integrity"]) == (
        "evil-pkg",
        "1.0.0",
        integrity(tarball("evil-pkg", "1.0.0")),
    )
