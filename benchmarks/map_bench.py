"""What the agent capability map costs on top of `inspect`, per project folder.

``python benchmarks/map_bench.py DIR...`` runs the project scan (`inspect`'s, in process)
on each folder, times the map's own work inside it (the joins made for it alone after the
files are read: Kubernetes agent containers and tools from other modules; building the map
from the facts, :func:`agentguard.engine.capability_map.build_map`) and each rendering
(JSON, text, Mermaid), and prints a Markdown row per folder, the shares against the scan
without the map: what `inspect`/`check` pay (joins + build + JSON) and what `map` adds
(joins + build + text). Each folder is scanned ``--rounds`` times (medians). The files
parsed for tool decorations alone are counted in the scan (their sources say so).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def measure(folder: Path, rounds: int) -> tuple[int, float, dict[str, float]]:
    """(agents, inspect seconds, {part: seconds}) as medians over ``rounds`` scans."""
    import agentguard.engine.capability_map as cm
    import agentguard.inspect.project.k8s_agents as k8s
    import agentguard.inspect.project.python_tool_imports as ti
    from agentguard.engine.project import inspect_project
    from agentguard.facts.capabilities_json import map_to_json
    from agentguard.findings import Provenance, Report
    from agentguard.report.map_mermaid import render_map_mermaid
    from agentguard.report.map_text import render_map_text

    spent: list[float] = []
    joins: list[float] = []
    original = cm.build_map
    originals = (k8s.k8s_agent_services, ti.join_imported_tools)

    def timed(*args, **kwargs):  # type: ignore[no-untyped-def]
        start = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            spent.append(time.perf_counter() - start)

    def timer(fn: Callable[..., Any]) -> Callable[..., Any]:
        def run(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                joins.append(time.perf_counter() - start)

        return run

    totals: list[float] = []
    parts: dict[str, list[float]] = {
        "joins": [],
        "build": [],
        "json": [],
        "text": [],
        "mermaid": [],
    }
    n = 0
    for _ in range(rounds):
        spent.clear()
        joins.clear()
        cm.build_map = timed  # finish() looks these up at call time
        k8s.k8s_agent_services = timer(originals[0])
        ti.join_imported_tools = timer(originals[1])
        start = time.perf_counter()
        try:
            result = inspect_project(folder)
        finally:
            cm.build_map = original
            k8s.k8s_agent_services, ti.join_imported_tools = originals
        totals.append(time.perf_counter() - start)
        parts["build"].append(sum(spent))
        parts["joins"].append(sum(joins))
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
        "| repository | agents | inspect | joins | build | JSON | text | Mermaid "
        "| inspect pays (joins + build + JSON) | map adds (joins + build + text) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for folder in args.folders:
        n, total, p = measure(folder, args.rounds)
        ms = {k: f"{v * 1000:.1f} ms" for k, v in p.items()}
        scan = total - p["build"] - p["joins"]
        own = p["joins"] + p["build"]
        print(
            f"| {folder.name} | {n} | {scan:.2f} s | {ms['joins']} | {ms['build']} "
            f"| {ms['json']} | {ms['text']} | {ms['mermaid']} | {(own + p['json']) / scan:.1%} "
            f"| {(own + p['text']) / scan:.1%} |"
        )


if __name__ == "__main__":
    main()
