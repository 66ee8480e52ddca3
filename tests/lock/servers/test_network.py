"""The real registries: an npm server and a PyPI server pinned, written back, and checked
offline afterwards. CI runs these (marker `network`)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from tests.lock.helpers import run_json, write_project

pytestmark = [pytest.mark.network, pytest.mark.usefixtures("isolated_cache")]

SERVERS = {
    "filesystem": {
        "command": "npx",
        "args": ["-y", "@modelcontextprotocol/server-filesystem", "."],
    },
    "fetch": {"command": "uvx", "args": ["mcp-server-fetch"]},
}


def test_real_servers_are_pinned_and_checked_offline(tmp_path: Path) -> None:
    project = write_project(tmp_path / "bot", ["packaging>=24"], requires_python=">=3.10")
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": SERVERS}, indent=2) + "\n")
    code, report, _ = run_json("lock", str(project), "--write-launch")
    assert not [s for s in report["sources"] if s["status"] == "failed"], report["sources"]
    entries = {
        e["package"]: e for e in json.loads((project / "mcp.lock.json").read_text())["servers"]
    }
    npm, pypi = entries["@modelcontextprotocol/server-filesystem"], entries["mcp-server-fetch"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", npm["version"])
    assert re.fullmatch(r"sha512-[A-Za-z0-9+/]{86}==", npm["integrity"])
    assert npm["tarball"].endswith(f"server-filesystem-{npm['version']}.tgz")
    assert npm["provenance"] in (True, None)  # listed, or unknown: never a guessed "no"
    # its own dependency tree, from a real npm lock: the server itself at the locked
    # version and integrity, every package a registry tarball with a sha512 integrity
    tree = npm["tree"]["packages"]
    assert len(tree) > 20
    assert tree[[p["path"] for p in tree].index(
        "node_modules/@modelcontextprotocol/server-filesystem"
    )]["integrity"] == npm["integrity"]  # fmt: skip
    assert "node_modules/@modelcontextprotocol/sdk" in {p["path"] for p in tree}
    assert all(p["resolved"].startswith(npm["registry"]) for p in tree)
    assert all(p["integrity"].startswith("sha512-") for p in tree)
    assert [f for f in report["findings"] if f["rule_id"] in ("AG147", "AG142")] == []
    assert pypi["hashes"] and all(re.fullmatch(r"sha256:[0-9a-f]{64}", h) for h in pypi["hashes"])
    assert "mcp" in {d["name"] for d in pypi["environment"]}
    launched = json.loads((project / ".mcp.json").read_text())["mcpServers"]
    assert launched["filesystem"]["args"] == [
        "-y",
        f"@modelcontextprotocol/server-filesystem@{npm['version']}",
        ".",
    ]
    assert launched["fetch"]["args"] == [
        "--from",
        f"mcp-server-fetch=={pypi['version']}",
        "mcp-server-fetch",
    ]

    # offline: no registry is reachable, and none is needed
    dead = {
        **os.environ,
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "HTTP_PROXY": "http://127.0.0.1:9",
        "npm_config_registry": "http://127.0.0.1:9/",
        "UV_OFFLINE": "1",
    }
    code, report, _ = run_json("lock", "--check", str(project), env=dead)
    assert code == 0, report["findings"]
    assert ("lockfile", "mcp.lock.json", "ok") in [
        (s["kind"], s["name"], s["status"]) for s in report["sources"]
    ]

    pinned = (project / ".mcp.json").read_text()
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": SERVERS}, indent=2) + "\n")
    code, report, _ = run_json("lock", "--check", str(project), env=dead)
    assert code == 1
    assert sorted(
        f["evidence"]["package"] for f in report["findings"] if f["rule_id"] == "AG142"
    ) == [
        "@modelcontextprotocol/server-filesystem",
        "mcp-server-fetch",
    ]

    # the launches pinned again, and one package of the tree edited by hand: AG142
    (project / ".mcp.json").write_text(pinned)
    lock_text = (project / "mcp.lock.json").read_text()
    sdk = next(p for p in tree if p["path"] == "node_modules/@modelcontextprotocol/sdk")
    edited = lock_text.replace(
        f'"path": "node_modules/@modelcontextprotocol/sdk", "version": "{sdk["version"]}"',
        '"path": "node_modules/@modelcontextprotocol/sdk", "version": "0.0.1"',
    )
    assert edited != lock_text
    (project / "mcp.lock.json").write_text(edited)
    code, report, _ = run_json("lock", "--check", str(project), env=dead)
    assert code == 1
    assert [
        (f["evidence"]["package"], f["evidence"]["tree"])
        for f in report["findings"]
        if f["rule_id"] == "AG142"
    ] == [
        (
            "@modelcontextprotocol/server-filesystem",
            ["the tree's digest is not over the packages it lists (edited by hand?)"],
        )
    ]
