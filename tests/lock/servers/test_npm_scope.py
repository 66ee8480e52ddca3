"""A scope's registry applies to that scope only (modelled on google-gemini/gemini-cli,
whose `.npmrc` is one line, `@google:registry=` and Google's own registry URL,
and whose configurations launch `npx -y @modelcontextprotocol/server-github`): a package
outside the scope comes from the default registry, so its launch is locked and checked; a
package of the scope stays unverified (AG142); a dependency of the scope in a locked
server's tree is AG142 too, since npx fetches it from the scope's registry. The real CLI,
the real npm and the 127.0.0.1 test registry."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.lock.helpers import run_json, strip_volatile
from tests.lock.npm_registry import NpmRegistry, serve

pytestmark = pytest.mark.usefixtures("isolated_cache")

# gemini-cli's .npmrc, its host swapped for an example one (one line, no newline at the end)
NPMRC = "@google:registry=https://wombat-dressing-room.example"
GITHUB = "@modelcontextprotocol/server-github"


@pytest.fixture()
def registry() -> Iterator[NpmRegistry]:
    reg = NpmRegistry({GITHUB: ["2025.4.8"], "@google/genai-tools": ["1.0.0"], "leaf": ["1.0.0"]})
    reg.deps[(GITHUB, "2025.4.8")] = {"leaf": "^1"}
    with serve(reg):
        yield reg


def project(tmp_path: Path, servers: dict[str, list[str]]) -> Path:
    root = tmp_path / "cli"
    (root / ".gemini").mkdir(parents=True)
    (root / ".npmrc").write_text(NPMRC)
    doc = {"mcpServers": {k: {"command": "npx", "args": v} for k, v in servers.items()}}
    (root / ".gemini" / "settings.json").write_text(json.dumps(doc, indent=2) + "\n")
    return root


def by_rule(report: dict[str, Any], *rules: str) -> list[dict[str, Any]]:
    return [strip_volatile(f) for f in report["findings"] if f["rule_id"] in rules]


def test_a_package_outside_the_scope_is_locked_and_checked(
    tmp_path: Path, registry: NpmRegistry
) -> None:
    root = project(tmp_path, {"github": ["-y", f"{GITHUB}@2025.4.8"]})
    code, report, _ = run_json("lock", str(root), "--npm-registry", registry.url)
    assert code == 0, report
    assert by_rule(report, "AG142", "AG147") == []
    [entry] = json.loads((root / "mcp.lock.json").read_text())["servers"]
    assert (entry["package"], entry["version"]) == (GITHUB, "2025.4.8")
    code, report, _ = run_json("lock", "--check", str(root))
    assert (code, by_rule(report, "AG142")) == (0, [])
    # and AG310 (inspect, check) no longer calls the pinned launch unverified
    code, report, _ = run_json("inspect", str(root))
    assert by_rule(report, "AG310") == []


def test_a_package_of_the_scope_stays_unverified(tmp_path: Path, registry: NpmRegistry) -> None:
    root = project(tmp_path, {"genai": ["-y", "@google/genai-tools@1.0.0"]})
    code, report, _ = run_json("lock", str(root), "--npm-registry", registry.url)
    assert code == 1
    assert [(f["rule_id"], f["message"]) for f in by_rule(report, "AG142")] == [
        (
            "AG142",
            "MCP server 'genai' is launched through `npx`, which the lock cannot check: "
            ".npmrc:1 sets `@google:registry` makes it fetch from a registry, index or package "
            "cache the project chooses; it is not locked and not verifiably pinned.",
        )
    ]
    assert not (root / "mcp.lock.json").exists()  # (nothing the lock can take)


def test_a_dependency_in_the_scope_is_not_verifiably_pinned(
    tmp_path: Path, registry: NpmRegistry
) -> None:
    registry.deps[(GITHUB, "2025.4.8")] = {"leaf": "^1", "@google/genai-tools": "^1"}
    root = project(tmp_path, {"github": ["-y", f"{GITHUB}@2025.4.8"]})
    code, report, _ = run_json("lock", str(root), "--npm-registry", registry.url)
    want = {
        "rule_id": "AG142",
        "title": "MCP server launch does not match the MCP server lock",
        "severity": "high",
        "confidence": "high",
        "message": f"MCP server 'github' launches `{GITHUB}`, whose dependency tree holds "
        "`@google/genai-tools` 1.0.0; .npmrc:1 sets `@google:registry` for the scope @google, "
        "so npx fetches it from a registry the project chooses, not the one the tree was "
        "locked from: it is not verifiably pinned.",
        "locations": [{"path": ".gemini/settings.json", "line": 3, "note": "MCP server 'github'"}],
        "fix": {
            "description": "Drop the @google registry setting from the project's files (a "
            "private registry belongs in CI's own configuration), then `agentguard lock` and "
            "`agentguard lock --write-launch`.",
            "safe": False,
        },
        "evidence": {
            "server": "github",
            "package": GITHUB,
            "dependency": "@google/genai-tools",
            "scope": "@google",
            "why": "registry",
        },
        "ambiguous": False,
        "suppressed": None,
    }
    assert (code, by_rule(report, "AG142")) == (1, [want])
    code, report, _ = run_json("lock", "--check", str(root))
    assert (code, by_rule(report, "AG142")) == (1, [want])
