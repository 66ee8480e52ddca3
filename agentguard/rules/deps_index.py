"""AG107: a lock pins packages from an index this run does not configure (no I/O).

The facts are the lock's pins with the index each names and the indexes configured on the
runner's side (:mod:`agentguard.lock.configured`), gathered by
:func:`agentguard.lock.existing.analyse_existing`.
"""

from __future__ import annotations

from collections.abc import Iterable

from agentguard.findings import Finding, Fix, Location, Severity
from agentguard.rules.base import Rule, register

MAX_LOCATIONS = 20


@register
class UnconfiguredIndex(Rule):
    """A lock pins packages from an index that nobody configured for this run.

    ## What it does
    For each index a project's own lock (uv.lock, poetry.lock, pylock.toml) names for its
    packages, compares it with the indexes configured on the runner's side: `--index-url`,
    `UV_DEFAULT_INDEX` / `UV_INDEX_URL` / `UV_INDEX` / `PIP_INDEX_URL` /
    `PIP_EXTRA_INDEX_URL`, the resolver's default (PyPI), and any host listed in
    `AGENTGUARD_INDEX_HOSTS`. An index the lock names that is none of these is reported,
    with every package pinned from it. The project's own `[[tool.uv.index]]` does not count:
    it is part of the pull request, like the lock.

    ## Why is this bad?
    `uv sync --locked` and `poetry install` fetch each package from the index the lock
    names. A lock moved to another index installs whatever that index serves under those
    names, and agentguard cannot read its metadata (it does not contact an index a file
    under review names), so the ranges below those packages are unknown too.

    ## Example
    A uv.lock whose packages read `source = { registry = "https://evil.example/simple/" }`.

    ## Use instead
    Re-lock from the index you trust (`uv lock --default-index https://pypi.org/simple`),
    or, if the index is yours, configure it for the run: pass `--index-url`, set `UV_INDEX`,
    or list its host in `AGENTGUARD_INDEX_HOSTS`.
    """

    id = "AG107"
    name = "unconfigured-index"
    title = "Lock pins packages from an index nobody configured"
    default_severity = Severity.HIGH
    family = "dependencies"


def check_unconfigured_indexes(
    lock_path: str, pinned: Iterable[tuple[str, str, str, int | None]]
) -> list[Finding]:
    """One AG107 per index: ``pinned`` holds (package, version, index, line in the lock)
    for every pin whose index is not configured."""
    by_index: dict[str, list[tuple[str, str, int | None]]] = {}
    for name, version, index, line in pinned:
        by_index.setdefault(index, []).append((name, version, line))
    out: list[Finding] = []
    for index, pins in sorted(by_index.items()):
        pins.sort()
        shown = ", ".join(f"{n}=={v}" for n, v, _ in pins[:10])
        more = f" and {len(pins) - 10} more" if len(pins) > 10 else ""
        out.append(
            UnconfiguredIndex.finding(
                f"{lock_path} pins {len(pins)} package{'s' if len(pins) != 1 else ''} from "
                f"{index}, an index not configured for this run ({shown}{more}): installing "
                "from this lock fetches them from there, and their declared ranges were not read.",
                locations=[Location(path=lock_path, line=line) for _, _, line in pins][
                    :MAX_LOCATIONS
                ],
                fix=Fix(
                    "Re-lock from the index you trust; if this index is yours, configure it for "
                    "the run (`--index-url`, `UV_INDEX`, or its host in "
                    "`AGENTGUARD_INDEX_HOSTS`)."
                ),
                evidence={
                    "file": lock_path,
                    "index": index,
                    "packages": [f"{n}=={v}" for n, v, _ in pins],
                },
            )
        )
    return out
