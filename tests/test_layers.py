"""The house holds its shape: no import cycle between agentguard's modules (every import
counted, those inside functions and under TYPE_CHECKING too), and the layers of
``[tool.importlinter]`` in pyproject.toml (checked by ``lint-imports`` in scripts/test)."""

from __future__ import annotations

import grimp


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan). An import of a
    package by one of its own modules (``from agentguard.lock import x`` in ``lock/y``)
    is the package's ``__init__``, so it counts like any other."""
    edges = {
        m: sorted(
            t
            for t in graph.find_modules_directly_imported_by(m)
            if t.startswith("agentguard") and not m.startswith(t + ".")
        )
        for m in graph.modules
        if m.startswith("agentguard")
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    groups: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return groups


def test_no_import_cycle_between_modules() -> None:
    graph = grimp.build_graph("agentguard", include_external_packages=False)
    assert _cycles(graph) == []


def test_a_cycle_is_found_when_there_is_one() -> None:
    # The check itself: two modules importing each other are one group.
    graph = grimp.ImportGraph()
    for name in ("agentguard", "agentguard.a", "agentguard.b", "agentguard.c"):
        graph.add_module(name)
    graph.add_import(importer="agentguard.a", imported="agentguard.b")
    graph.add_import(importer="agentguard.b", imported="agentguard.a")
    graph.add_import(importer="agentguard.c", imported="agentguard.a")
    assert _cycles(graph) == [["agentguard.a", "agentguard.b"]]
