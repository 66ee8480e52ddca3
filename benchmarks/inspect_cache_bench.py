"""`agentguard inspect DIR` on real trees: cold and warm, beside ruff and Trivy.

For each folder given (a checkout; the field's are extracted from their git mirrors with
``git archive HEAD | tar -x``) times, one run of each per round so that a busy minute
of the machine is shared, median of the rounds:

* cold: ``agentguard inspect DIR`` with an empty cache folder (every file read,
  pre-filtered and parsed, the pack written; ``--no-cache`` costs the same less the hashes);
* warm: again with the pack in place (what a re-run, or CI with a restored cache, pays);
* ``ruff check --select S --no-cache`` over the same tree (what users already run);
* ``trivy fs --scanners misconfig,secret`` (offline) where trivy is installed;
* with ``--baseline AGENTGUARD``: the cold and warm runs of another agentguard (the
  version before a change), in the same rounds, with its own cache folder.

Each figure is the wall time, the CPU time (user + system, of the process and its
children) and the peak memory of the largest process; the load average is printed with
each tree. The runs share one cache key (``AGENTGUARD_CACHE_KEY``, as CI sets it from a
secret); the findings, sources and facts of a ``--no-cache`` run (made once, not timed),
the cold and the warm run are compared whole and a difference is an error (with
``--baseline``, its findings must equal these too). agentguard runs byte-compiled, as
``pip install`` leaves it. ``--trivy-rounds`` runs Trivy fewer times than the others (it
takes 40 s of CPU on pydantic-ai's 180 MB of test cassettes).

Usage: python benchmarks/inspect_cache_bench.py DIR... [--rounds 5] [--markdown]
       [--baseline PATH/TO/OTHER/agentguard] [--trivy-rounds N]
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

Sample = tuple[float, float, float]  # wall s, CPU s, peak RSS MB


def _run(argv: list[str], env: dict[str, str]) -> Sample:
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, _, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def _report(path: Path, *, whole: bool = True) -> object:
    got = json.loads(path.read_text())
    return [got["findings"], got["sources"], got["facts"]] if whole else got["findings"]


def bench(
    folder: Path, rounds: int, scratch: Path, baseline: str | None, trivy_rounds: int
) -> dict[str, Sample]:
    env = dict(os.environ, AGENTGUARD_CACHE_KEY="benchmark")
    runs: dict[str, tuple[list[str], Path | None]] = {}
    mine = str(VENV_BIN / "agentguard")
    for who, exe in (("", mine), ("base ", baseline)):
        if exe is None:
            continue
        cache = scratch / f"{who.strip() or 'mine'}-cache"
        ag = [exe, "inspect", str(folder), "--format", "json"]
        for name, extra in (
            ("no cache", ["--no-cache"]),
            ("cold", ["--cache-dir", str(cache)]),
            ("warm", ["--cache-dir", str(cache)]),
        ):
            if who and name == "no cache":
                continue
            out = scratch / f"{who}{name}.json".replace(" ", "-")
            runs[who + name] = (
                [*ag, *extra, "--output", str(out)],
                cache if name == "cold" else None,
            )
    runs["ruff S"] = (
        [str(VENV_BIN / "ruff"), "check", "--select", "S", "--no-cache", "--quiet",
         "--exit-zero", str(folder)],
        None,
    )  # fmt: skip
    trivy = shutil.which("trivy") or (
        str(VENV_BIN / "trivy") if (VENV_BIN / "trivy").exists() else None
    )
    if trivy:
        runs["trivy"] = (
            [trivy, "fs", "--scanners", "misconfig,secret", "--skip-check-update",
             "--offline-scan", "--quiet", "--format", "json", str(folder)],
            None,
        )  # fmt: skip
    for name, (argv, _) in runs.items():  # the page cache warm for every tool
        if name != "trivy" or trivy_rounds > 0:
            _run(argv, env)
    untimed = runs.pop("no cache")[0]
    times: dict[str, list[Sample]] = {k: [] for k in runs}
    for n in range(rounds):
        for name, (argv, fresh) in runs.items():
            if name == "trivy" and n >= trivy_rounds:
                continue
            if fresh is not None:
                shutil.rmtree(fresh, ignore_errors=True)
            times[name].append(_run(argv, env))
    _run(untimed, env)
    reports = [_report(scratch / f"{k}.json") for k in ("no-cache", "cold", "warm")]
    if not reports[0] == reports[1] == reports[2]:
        raise SystemExit(f"{folder}: the reports with and without the cache differ")
    if baseline and _report(scratch / "base-cold.json", whole=False) != _report(
        scratch / "cold.json", whole=False
    ):
        raise SystemExit(f"{folder}: the findings differ from the baseline's")
    return {
        k: (
            statistics.median(s[0] for s in v),
            statistics.median(s[1] for s in v),
            max(s[2] for s in v),
        )
        for k, v in times.items()
        if v
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--baseline", help="another agentguard executable, timed beside")
    parser.add_argument("--trivy-rounds", type=int, default=None, help="(default: --rounds)")
    args = parser.parse_args()
    byte_compile()
    print(f"{os.cpu_count()} CPUs; median of {args.rounds} rounds; wall s / CPU s (user+sys)")
    for folder in args.folders:
        before = os.getloadavg()[0]
        with tempfile.TemporaryDirectory() as scratch:
            trivy_rounds = args.rounds if args.trivy_rounds is None else args.trivy_rounds
            got = bench(folder.resolve(), args.rounds, Path(scratch), args.baseline, trivy_rounds)
        load = f"{before:.1f}-{os.getloadavg()[0]:.1f}"
        name = folder.resolve().name
        if args.markdown:
            cells = " | ".join(f"{w:.2f} / {c:.2f}" for w, c, _ in got.values())
            print(f"| {name} | {cells} | {load} |")
        else:
            print(f"{name} (load {load})")
            for k, (w, c, rss) in got.items():
                print(f"    {k:14} {w:6.2f} s wall {c:6.2f} s CPU {rss:6.0f} MB")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
