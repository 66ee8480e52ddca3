"""What the agent capability map costs on top of `inspect`, per project folder.

``python benchmarks/map_bench.py DIR...`` runs the project scan (`inspect`'s, in process)
on each folder, times the map's own work inside it (building the map from the facts,
:func:`agentguard.engine.capability_map.build_map`) and its three renderings (text, JSON,
Mermaid), and prints a Markdown row per folder: agents, inspect seconds, map milliseconds
and the map's share. Each folder is scanned ``--rounds`` times (median).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path


def measure(folder: Path, rounds: int) -> tuple[int, float, float]:
    import agentguard.engine.capability_map as cm
    from agentguard.engine.project import inspect_project
    from agentguard.facts.capabilities_json import map_to_json
    from agentguard.findings import Provenance, Report
    from agentguard.report.map_mermaid import render_map_mermaid
    from agentguard.report.map_text import render_map_text

    spent: list[float] = []
    original = cm.build_map

    def timed(*args, **kwargs):  # type: ignore[no-untyped-def]
        start = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            spent.append(time.perf_counter() - start)

    import agentguard.engine.project as project

    totals, maps = [], []
    for _ in range(rounds):
        spent.clear()
        cm.build_map = timed
        start = time.perf_counter()
        try:
            result = inspect_project(folder)
        finally:
            cm.build_map = original
        total = time.perf_counter() - start
        m = result.capabilities
        start = time.perf_counter()
        report = Report(Provenance("map", "", "", str(folder), {}), (), result.sources)
        render_map_text(report, m)
        if m is not None:
            map_to_json(m)
        render_map_mermaid(m)
        render = time.perf_counter() - start
        totals.append(total + render)
        maps.append(sum(spent) + render)
    assert project  # the scan module was imported (build_map is looked up at call time)
    n = len(result.capabilities.agents) if result.capabilities else 0
    return n, statistics.median(totals), statistics.median(maps)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("folders", nargs="+", type=Path)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    print("| repository | agents | inspect + map | map (build + 3 renderings) | share |")
    print("|---|---:|---:|---:|---:|")
    for folder in args.folders:
        n, total, spent = measure(folder, args.rounds)
        print(
            f"| {folder.name} | {n} | {total:.2f} s | {spent * 1000:.1f} ms | {spent / total:.1%} |"
        )


if __name__ == "__main__":
    main()
