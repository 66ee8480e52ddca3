"""The real Mermaid parser (the npm ``mermaid`` package under node, DOM from ``jsdom``).

The packages are installed from ``tests/mermaid/package-lock.json`` with ``npm ci`` into a
cache folder keyed by the lockfile's hash (``$AGENTGUARD_NPM_CACHE``, else
``~/.cache/agentguard-tests``): the first run on a machine installs them (the npm
registry), later runs reuse them. No node or npm is a test failure, never a skip.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent / "mermaid"
# how the parser keeps an entity code (`#60;`) in a label until it renders it
_ENTITY = re.compile(r"ﬂ°°(\d+)¶ß")


def _cache_root() -> Path:
    env = os.environ.get("AGENTGUARD_NPM_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "agentguard-tests"


def install() -> Path:
    """The folder holding node_modules for tests/mermaid (installed once per lockfile)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.fail("node and npm are needed for the Mermaid parser test (install nodejs, npm)")
    lock = (HERE / "package-lock.json").read_bytes()
    key = hashlib.sha256(lock + (HERE / "package.json").read_bytes()).hexdigest()[:16]
    target = _cache_root() / f"mermaid-{key}"
    if (target / ".installed").is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="mermaid-", dir=target.parent))
    for name in ("package.json", "package-lock.json"):
        shutil.copyfile(HERE / name, work / name)
    done = subprocess.run(
        [npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--prefix", str(work)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode != 0:
        shutil.rmtree(work, ignore_errors=True)
        pytest.fail(f"npm ci of tests/mermaid failed: {done.stderr[-2000:]}")
    (work / ".installed").write_text(key, encoding="utf-8")
    try:
        work.rename(target)
    except OSError:  # another run installed it meanwhile
        shutil.rmtree(work, ignore_errors=True)
    return target


def parse(texts: list[str]) -> list[dict[str, Any]]:
    """Each Mermaid document parsed by the real parser: ``ok``, ``type``, ``nodes`` (id ->
    label, entity codes decoded) and ``edges`` ([from, to, label]), or ``error``."""
    modules = install()
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for i, text in enumerate(texts):
            path = Path(tmp, f"{i}.mmd")
            path.write_text(text, encoding="utf-8")
            files.append(str(path))
        script = Path(tmp, "parse.mjs")
        shutil.copyfile(HERE / "parse.mjs", script)
        env = {**os.environ, "NODE_PATH": str(modules / "node_modules")}
        # an ES module resolves packages from its own folder up: link node_modules beside it
        (Path(tmp) / "node_modules").symlink_to(modules / "node_modules")
        done = subprocess.run(
            ["node", str(script), *files], capture_output=True, text=True, timeout=120, env=env
        )
    out = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert len(out) == len(texts), done.stderr[-2000:]
    for doc in out:
        if doc.get("ok"):
            doc["nodes"] = {k: _decode(v) for k, v in doc["nodes"].items()}
            doc["edges"] = [[a, b, _decode(t)] for a, b, t in doc["edges"]]
    return out


def _decode(text: str) -> str:
    return _ENTITY.sub(lambda m: chr(int(m.group(1))), text)
