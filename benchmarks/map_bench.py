"""What the agent capability map costs on top of `inspect`, per project folder.

``python benchmarks/map_bench.py DIR...`` runs the project scan (`inspect`'s, in process)
on each folder, times the map's own work inside it (building the map from the facts,
:func:`agentguard.engine.capability_map.build_map`) and each rendering (JSON, text,
Mermaid), and prints a Markdown row per folder, the shares against the scan without the
map: what `inspect`/`check` pay (build + JSON) and what `map` adds (build + text). Each
folder is scanned ``--rounds`` times (medians).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path


def measure(folder: Path, rounds: int) -> tuple[int, float, dict[str, float]]:
    """(agents, inspect seconds, {part: seconds}) as medians over ``rounds`` scans."""
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

    totals: list[float] = []
    parts: dict[str, list[float]] = {"build": [], "json": [], "text": [], "mermaid": []}
    n = 0
    for _ in range(rounds):
        spent.clear()
        cm.build_map = timed  # finish() looks it up at call time
        start = time.perf_counter()
        try:
            result = inspect_project(folder)
        finally:
            cm.build_map = original
        totals.append(time.perf_counter() - start)
        parts["build"].append(sum(spent))
        m = result.capabilities
        n = len(m.agents) if m is not None else 0
        report = Report(Provenance("map", "", "", str(folder), {}), (), result.sources)
        for name in ("json", "text", "mermaid"):
            start = time.perf_counter()
            if name == "json" and m is not None:
                map_to_json(m)
            elif name == "text":
                render_map_text(report, m)
            elif name == "mermaid":
                render_map_mermaid(m)
            parts[name].append(time.perf_counter() - start)
    return n, statistics.median(totals), {k: statistics.median(v) for k, v in parts.items()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("folders", nargs="+", type=Path)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    print(
        "| repository | agents | inspect | build | JSON | text | Mermaid "
        "| inspect pays (build + JSON) | map adds (build + text) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for folder in args.folders:
        n, total, p = measure(folder, args.rounds)
        ms = {k: f"{v * 1000:.1f} ms" for k, v in p.items()}
        scan = total - p["build"]
        print(
            f"| {folder.name} | {n} | {scan:.2f} s | {ms['build']} | {ms['json']} "
            f"| {ms['text']} | {ms['mermaid']} | {(p['build'] + p['json']) / scan:.1%} "
            f"| {(p['build'] + p['text']) / scan:.1%} |"
        )


if __name__ == "__main__":
    main()
