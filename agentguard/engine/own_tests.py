"""A library's tests of its own fallback class are not a deployment's fallback.

pydantic-ai's tests build ``FallbackModel(...)`` a hundred times to test the class they
ship: every one is the library exercising its own API, not a model some deployment falls
back to silently. A fallback site is set aside here when both hold: the call that takes
the fallback (its ``callee``) resolves into one of the project's own top-level modules
(:func:`~agentguard.inspect.project.own_modules.project_modules`), and the site's file
is test code by its own path's names *and* by the configured context globs. The
configuration is the scanned project's on a pull request: a glob may keep a site reported
(``context = {production = ["tests/e2e/**"]}``), never set one aside. The
same call in the library's examples or docs, or in another project's tests, stays a
finding. Nothing is dropped unsaid: the sites set aside become one skipped source per
class, with their count and why."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from agentguard.context import context_of, path_context
from agentguard.facts.agents import FallbackSite
from agentguard.findings import Source


def own_api_tests(
    sites: Sequence[FallbackSite],
    own_modules: frozenset[str],
    contexts: Mapping[str, tuple[str, ...]],
) -> tuple[tuple[FallbackSite, ...], tuple[Source, ...]]:
    """The sites to judge, and a skipped source for each class whose tests were set aside."""
    kept: list[FallbackSite] = []
    set_aside: dict[str, Counter[str]] = {}  # own top-level module -> callee -> sites
    for site in sites:
        top = site.callee.split(".")[0]
        if site.callee and top in own_modules and _test_code(site.path, contexts):
            set_aside.setdefault(top, Counter())[site.callee] += 1
        else:
            kept.append(site)
    return tuple(kept), tuple(_source(c) for _, c in sorted(set_aside.items()))


def _test_code(path: str, contexts: Mapping[str, tuple[str, ...]]) -> bool:
    rel = path.removeprefix("./")
    return path_context(rel) == "test" and context_of([rel], contexts) == "test"


def _source(callees: Counter[str]) -> Source:
    """One skipped source for the sites of one own module (each spelling of its classes
    named: a re-export is the same class under another name, and neither is picked)."""
    n = sum(callees.values())
    names = sorted(callees)
    counts = "" if len(names) == 1 else f" ({', '.join(f'{c}: {callees[c]}' for c in names)})"
    return Source.skipped(
        "fallbacks",
        ", ".join(names),
        f"{n} fallback site(s) in the tests of the library that defines {' and '.join(names)}"
        f"{counts}: the library testing its own class, not a deployment's fallback (not "
        "reported)",
    )
