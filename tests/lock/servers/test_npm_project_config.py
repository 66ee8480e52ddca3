"""The project's npm settings that choose what npx runs, read as npm reads them. npx runs
a package it finds in its cache (`cache=`: a folder the pull request commits, holding
`_npx/<hash>/node_modules/<package>`) or under the global prefix (`prefix=`) without taking
the registry's tarball, and npm reads an `.npmrc` key quoted, in an array (`key[]`), after
a byte-order mark or a line separator, and a variable's name in any case with `_` for `-`.
Each makes the launch not verifiably pinned (AG142), never "locked". The real npx and npm
read each setting first, so the test holds what npm does; the 127.0.0.1 test registry."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.lock.helpers import run_json
from tests.lock.npm_registry import NpmRegistry, serve

pytestmark = pytest.mark.usefixtures("isolated_cache")

NAME = "@acme/tracker-mcp"


@pytest.fixture()
def registry() -> Iterator[NpmRegistry]:
    with serve(NpmRegistry({NAME: ["2.0.1"]})) as reg:
        yield reg


def _project(tmp_path: Path, npmrc: str | None, env: dict[str, str] | None = None) -> Path:
    root = tmp_path / "bot"
    root.mkdir()
    server: dict[str, Any] = {"command": "npx", "args": ["-y", f"{NAME}@2.0.1"]}
    if env:
        server["env"] = env
    doc = {"mcpServers": {"tracker": server}}
    (root / ".mcp.json").write_text(json.dumps(doc, indent=2) + "\n")
    if npmrc is not None:
        (root / ".npmrc").write_text(npmrc, encoding="utf-8")
    return root


def _not_locked(root: Path, registry: NpmRegistry, said: str) -> None:
    code, report, _ = run_json("lock", str(root), "--npm-registry", registry.url)
    assert code == 1, report["sources"]
    assert [f["message"] for f in report["findings"] if f["rule_id"] == "AG142"] == [
        f"MCP server 'tracker' is launched through `npx`, which the lock cannot check: {said} "
        "makes it fetch from a registry, index or package cache the project chooses; it is not "
        "locked and not verifiably pinned."
    ]
    assert not (root / "mcp.lock.json").exists()


def _npm(root: Path, tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> str:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    base = {"PATH": os.environ["PATH"], "HOME": str(home), **(env or {})}
    proc = subprocess.run(
        ["npm", *args], cwd=root, env=base, capture_output=True, text=True, timeout=120,
        check=False,
    )  # fmt: skip
    return proc.stdout.strip() + proc.stderr[-400:]


def test_npx_runs_what_a_cache_of_the_project_holds(tmp_path: Path, registry: NpmRegistry) -> None:
    root = _project(tmp_path, "cache=.npm-cache\n")
    digest = hashlib.sha512(f"{NAME}@2.0.1".encode()).hexdigest()[:16]
    npx_dir = root / ".npm-cache" / "_npx" / digest
    package = npx_dir / "node_modules" / NAME
    package.mkdir(parents=True)
    (npx_dir / "package.json").write_text(json.dumps({"dependencies": {NAME: "^2.0.1"}}))
    (package / "package.json").write_text(
        json.dumps({"name": NAME, "version": "2.0.1", "bin": {"server": "evil.js"}})
    )
    (package / "evil.js").write_text("#!/usr/bin/env node\nconsole.log('the project ran')\n")
    (package / "evil.js").chmod(0o755)
    (npx_dir / "node_modules" / ".bin").mkdir()
    (npx_dir / "node_modules" / ".bin" / "server").symlink_to(f"../{NAME}/evil.js")
    # npx asks the registry for the version, then runs the project's copy
    ran = _npm(root, tmp_path, "exec", "-y", "--registry", registry.url, "--", f"{NAME}@2.0.1")
    assert ran.startswith("the project ran"), ran
    _not_locked(root, registry, ".npmrc:1 sets `cache`")


NPMRC = [
    ('"registry" = http://127.0.0.1:9/', "registry", ".npmrc:1 sets `registry`"),
    ("'registry'=http://127.0.0.1:9/", "registry", ".npmrc:1 sets `registry`"),
    ("registry[]=http://127.0.0.1:9/", "registry", ".npmrc:1 sets `registry`"),
    ("\ufeffregistry=http://127.0.0.1:9/", "registry", ".npmrc:1 sets `registry`"),
    ("registry\u2028=http://127.0.0.1:9/", "registry", ".npmrc:1 sets `registry`"),
    ('"\\u0072egistry"=http://127.0.0.1:9/', "registry", ".npmrc:1 sets `registry`"),
    ('"@acme:registry"=http://127.0.0.1:9/', "@acme:registry", ".npmrc:1 sets `@acme:registry`"),
    ("; a comment\nprefix=./tools", "prefix", ".npmrc:2 sets `prefix`"),
    ("strict-ssl=false", "strict-ssl", ".npmrc:1 sets `strict-ssl`"),
    ("https-proxy=http://127.0.0.1:9/", "https-proxy", ".npmrc:1 sets `https-proxy`"),
]


@pytest.mark.parametrize(("line", "key", "said"), NPMRC)
def test_an_npmrc_key_as_npm_reads_it(
    tmp_path: Path, registry: NpmRegistry, line: str, key: str, said: str
) -> None:
    root = _project(tmp_path, line + "\n")
    (root / "package.json").write_text('{"name": "bot", "version": "1.0.0"}')
    default = _npm(tmp_path, tmp_path, "config", "get", key)
    assert _npm(root, tmp_path, "config", "get", key) != default  # npm reads the line
    _not_locked(root, registry, said)


@pytest.mark.parametrize(
    ("name", "value", "key"),
    [
        ("NPM_CONFIG_CACHE", ".npm-cache", "cache"),
        ("npm_config_prefer_offline", "true", "prefer-offline"),
        ("Npm_Config_Strict_Ssl", "false", "strict-ssl"),
    ],
)
def test_a_server_variable_as_npm_reads_it(
    tmp_path: Path, registry: NpmRegistry, name: str, value: str, key: str
) -> None:
    root = _project(tmp_path, None, {name: value})
    default = _npm(root, tmp_path, "config", "get", key)
    assert _npm(root, tmp_path, "config", "get", key, env={name: value}) != default
    _not_locked(root, registry, f"`{name}`")
