"""`agentguard lock` / `lock --check` / `--write-launch` on launches the lock cannot check
(the real CLI, an npm registry on 127.0.0.1): the package recorded is the one the launcher
runs; an option after the package is the server's; another registry (flag, the server's
`env`, the project's `.npmrc`), an extra package or an option agentguard does not read is
an AG142 finding, never a pin, and the launch is never rewritten."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.lock.helpers import run_json
from tests.lock.npm_registry import NpmRegistry, serve

pytestmark = pytest.mark.usefixtures("isolated_cache")
DIGEST = "sha256:" + "a" * 64
SERVERS: dict[str, Any] = {
    "a": {"command": "npx", "args": ["-y", "evil-server", "-p", "good-server@1.2.3"]},
    "q": {"command": "npx", "args": ["-y", "--prefix", "good-server", "evil-server"]},
    "b": {"command": "npx", "args": ["-y", "-p", "good-server@1.2.3", "-p", "evil-server", "e"]},
    "c": {"command": "npx", "args": ["-y", "--registry", "http://127.0.0.1:9/", "good-server"]},
    "d": {
        "command": "npx",
        "args": ["-y", "good-server@1.2.3"],
        "env": {"npm_config_registry": "http://127.0.0.1:9/"},
    },
    "m": {"command": "npx", "args": ["-y", "-c", "good-server@1.2.3"]},
    "z": {"command": "npx", "args": ["-y", "--frobnicate", "good-server@1.2.3", "evil-server"]},
    "u": {
        "command": "docker",
        "args": ["run", "-i", "--health-cmd", f"ghcr.io/acme/good-mcp@{DIGEST}", "evil/mcp"],
    },
}
WHY = {
    "q": ("npx", "registry"),
    "b": ("npx", "packages"),
    "c": ("npx", "registry"),
    "d": ("npx", "registry"),
    "m": ("npx", "line"),
    "z": ("npx", "line"),
}


@pytest.fixture()
def registry() -> Iterator[NpmRegistry]:
    with serve(NpmRegistry({"good-server": ["1.0.0", "1.2.3"], "evil-server": ["6.6.6"]})) as reg:
        yield reg


def _unverified(report: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {
        f["evidence"]["server"]: (f["evidence"]["launcher"], f["evidence"]["why"])
        for f in report["findings"]
        if f["rule_id"] == "AG142" and "launcher" in f["evidence"]
    }


def test_the_lock_records_what_runs_and_reports_what_it_cannot_check(
    tmp_path: Path, registry: NpmRegistry
) -> None:
    project = tmp_path / "p"
    project.mkdir()
    text = json.dumps({"mcpServers": SERVERS}, indent=1)
    (project / ".mcp.json").write_text(text)
    code, report, _ = run_json(
        "lock", str(project), "--npm-registry", registry.url, "--write-launch"
    )
    assert code == 1
    lock = json.loads((project / "mcp.lock.json").read_text())
    assert [(e["launch"]["server"], e["package"], e["version"]) for e in lock["servers"]] == [
        ("a", "evil-server", "6.6.6")
    ]
    assert _unverified(report) == WHY
    [z] = [f for f in report["findings"] if f["evidence"].get("server") == "z"]
    assert (z["severity"], z["message"], z["fix"]["description"]) == (
        "high",
        "MCP server 'z' is launched through `npx`, which the lock cannot check: the npx option "
        "`--frobnicate` is not one agentguard reads; it is not locked and not verifiably pinned.",
        "Launch one package with `npx`'s plain options (an exact version; an image by digest), "
        "then `agentguard lock` and `agentguard lock --write-launch`.",
    )
    assert [f["evidence"]["image"] for f in report["findings"] if f["rule_id"] == "AG143"] == [
        "evil/mcp"
    ]
    # only the launch the lock holds is rewritten: the package the launcher runs, pinned
    want = dict(SERVERS, a={"command": "npx", "args": ["-y", "evil-server@6.6.6", "-p",
                                                      "good-server@1.2.3"]})  # fmt: skip
    assert json.loads((project / ".mcp.json").read_text()) == {"mcpServers": want}
    assert [r for r in registry.requests if "good-server" in r] == []

    code, report, _ = run_json("lock", "--check", str(project))
    assert code == 1 and _unverified(report) == WHY


def test_a_project_npmrc_registry_is_never_pinned_against_the_default(
    tmp_path: Path, registry: NpmRegistry
) -> None:
    project = tmp_path / "p"
    project.mkdir()
    (project / ".npmrc").write_text("save-exact=true\nregistry=http://127.0.0.1:9/\n")
    launch = {"command": "npx", "args": ["-y", "good-server"]}
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"g": launch}}))
    code, report, _ = run_json(
        "lock", str(project), "--npm-registry", registry.url, "--write-launch"
    )
    assert code == 1
    [f] = [f for f in report["findings"] if f["rule_id"] == "AG142"]
    assert f["message"] == (
        "MCP server 'g' is launched through `npx`, which the lock cannot check: .npmrc:2 sets "
        "`registry` makes it fetch from a registry, index or package cache the project chooses; "
        "it is not locked and not verifiably pinned."
    )
    assert not (project / "mcp.lock.json").exists()
    assert json.loads((project / ".mcp.json").read_text()) == {"mcpServers": {"g": launch}}
    assert registry.requests == []
    code, report, _ = run_json("check", str(project))
    [ag310] = [f for f in report["findings"] if f["rule_id"] == "AG310"]
    assert ag310["message"] == (
        "MCP server 'g' (.mcp.json) launches an npm package through `npx`: .npmrc:2 sets "
        "`registry` makes it fetch from a registry, index or package cache the project chooses, "
        "not from the default registry."
    )
