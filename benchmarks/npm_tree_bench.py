"""What recording each npm MCP server's own dependency tree costs `agentguard lock`: a
project launching four of the reference servers by exact version (no Python inputs),
against the real npm registry.

- cold: no `mcp.lock.json`, empty agentguard cache (so npm's cache, kept under it, is
  empty too): the packuments, tarballs and attestations agentguard reads, plus one
  `npm install --package-lock-only` per server;
- first lock, warm: no `mcp.lock.json`, the cache filled by the runs before (one npm run
  per server, its packuments revalidated);
- re-lock: unchanged inputs, warm: the tree is kept from the lock (no npm run).

Run it once per agentguard to compare (the one without trees from another checkout):

    python benchmarks/npm_tree_bench.py [--repeat N]
    PYTHONPATH=/path/to/other/checkout python benchmarks/npm_tree_bench.py
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SERVERS = {
    "filesystem": "@modelcontextprotocol/server-filesystem@2026.8.31",
    "memory": "@modelcontextprotocol/server-memory@2026.8.31",
    "thinking": "@modelcontextprotocol/server-sequential-thinking@2026.8.31",
    "everything": "@modelcontextprotocol/server-everything@2026.8.31",
}


def project(root: Path) -> Path:
    root.mkdir(parents=True)
    doc = {
        "mcpServers": {
            name: {"command": "npx", "args": ["-y", spec]} for name, spec in SERVERS.items()
        }
    }
    (root / ".mcp.json").write_text(json.dumps(doc, indent=2) + "\n")
    return root


def timed(args: list[str], env: dict[str, str]) -> tuple[float, int]:
    started = time.perf_counter()
    proc = subprocess.run(args, env=env, capture_output=True, text=True, check=False)
    took = time.perf_counter() - started
    if proc.returncode not in (0, 1):
        sys.stderr.write(proc.stdout[-2000:] + proc.stderr[-2000:])
    return took, proc.returncode


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    ag = [sys.executable, "-m", "agentguard", "lock", "-q"]
    cold: list[float] = []
    relock: list[float] = []
    first: list[float] = []
    packages = None
    with tempfile.TemporaryDirectory(prefix="ag-npmtree-") as tmp:
        for i in range(args.repeat):
            work = Path(tmp) / str(i)
            env = {**os.environ, "AGENTGUARD_CACHE_DIR": str(work / "cache")}
            root = project(work / "bot")
            took, _ = timed([*ag, str(root)], env)
            cold.append(took)
            for _ in range(3):
                took, _ = timed([*ag, str(root)], env)
                relock.append(took)
            lock = json.loads((root / "mcp.lock.json").read_text())
            (root / "mcp.lock.json").unlink()
            (root / "mcp.attestations.json").unlink(missing_ok=True)
            took, _ = timed([*ag, str(root)], env)
            first.append(took)
            packages = {
                e["package"]: len(e["tree"]["packages"]) if e.get("tree") else None
                for e in lock["servers"]
            }
            shutil.rmtree(work)
    print(f"lock-version {lock['lock-version']}; tree packages per server: {packages}")
    print(f"cold lock   median {statistics.median(cold):.2f} s  (runs: {_all(cold)})")
    print(f"first, warm median {statistics.median(first):.2f} s  (runs: {_all(first)})")
    print(f"re-lock     median {statistics.median(relock):.2f} s  (runs: {_all(relock)})")


def _all(xs: list[float]) -> str:
    return ", ".join(f"{x:.2f}" for x in xs)


if __name__ == "__main__":
    main()
