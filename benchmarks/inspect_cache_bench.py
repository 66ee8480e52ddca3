"""`agentguard inspect DIR` on real trees: without the content cache, cold, warm.

For each folder given (a checkout; the field's are extracted from their git mirrors with
``git archive HEAD | tar -x``) times, one run of each per round so that a busy minute
of the machine is shared, median of the rounds:

* ``agentguard inspect DIR --no-cache`` (every file read and parsed);
* cold: the same with an empty cache folder (reads all, writes the pack);
* warm: again with the pack in place (what a re-run, or CI with a restored cache, pays);
* ``ruff check --select S --no-cache`` over the same tree (what users already run);
* ``trivy fs --scanners misconfig,secret`` (offline) where trivy is installed.

The runs share one cache key (``AGENTGUARD_CACHE_KEY``, as CI sets it from a secret) and
a scratch cache folder; findings of the three agentguard runs are compared whole and a
difference is an error. agentguard runs byte-compiled, as ``pip install`` leaves it.

Usage: python benchmarks/inspect_cache_bench.py DIR... [--rounds 3] [--markdown]
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

from installed import byte_compile  # benchmarks/installed.py

VENV_BIN = Path(sys.executable).parent


def _run(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the process and its children)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, _, usage = os.wait4(proc.pid, 0)
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime


def _findings(report: Path) -> object:
    got = json.loads(report.read_text())
    return [got["findings"], got["sources"], got["facts"]]


def bench(folder: Path, rounds: int, scratch: Path) -> dict[str, tuple[float, float]]:
    cache = scratch / "cache"
    env = dict(os.environ, AGENTGUARD_CACHE_KEY="benchmark")
    ag = [str(VENV_BIN / "agentguard"), "inspect", str(folder), "--format", "json"]
    out = {k: scratch / f"{k}.json" for k in ("plain", "cold", "warm")}
    plain = [*ag, "--no-cache", "--output", str(out["plain"])]
    cold = [*ag, "--cache-dir", str(cache), "--output", str(out["cold"])]
    warm = [*ag, "--cache-dir", str(cache), "--output", str(out["warm"])]
    ruff = [str(VENV_BIN / "ruff"), "check", "--select", "S", "--no-cache", "--quiet",
            "--exit-zero", str(folder)]  # fmt: skip
    trivy_bin = shutil.which("trivy")
    trivy = [trivy_bin or "trivy", "fs", "--scanners", "misconfig,secret", "--offline-scan",
             "--skip-db-update", "--quiet", str(folder)]  # fmt: skip
    times: dict[str, list[tuple[float, float]]] = {"plain": [], "cold": [], "warm": [], "ruff": []}
    if trivy_bin:
        times["trivy"] = []
    _run(plain, env)  # the page cache warm for every tool
    for _ in range(rounds):
        times["plain"].append(_run(plain, env))
        shutil.rmtree(cache, ignore_errors=True)
        times["cold"].append(_run(cold, env))
        times["warm"].append(_run(warm, env))
        times["ruff"].append(_run(ruff, env))
        if trivy_bin:
            times["trivy"].append(_run(trivy, env))
    if not _findings(out["plain"]) == _findings(out["cold"]) == _findings(out["warm"]):
        raise SystemExit(f"{folder}: the reports with and without the cache differ")
    return {
        k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v))
        for k, v in times.items()
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    byte_compile()
    print(f"{os.cpu_count()} CPUs; median of {args.rounds} rounds")
    if not shutil.which("trivy"):
        print("trivy not installed: its column is left out")
    for folder in args.folders:
        load = os.getloadavg()[0]
        with tempfile.TemporaryDirectory() as scratch:
            got = bench(folder.resolve(), args.rounds, Path(scratch))
        name = folder.resolve().name
        cells = " | ".join(f"{w:.2f} s" for w, _ in got.values())
        if args.markdown:
            print(f"| {name} | {cells} | {load:.1f} |")
        else:
            print(f"{name:52} " + "  ".join(f"{k} {w:5.2f}s/{c:5.2f}cpu" for k, (w, c) in got.items())
                  + f"  load {load:.1f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
