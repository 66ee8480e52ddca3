"""When things shipped: the evidence for which major a parent was built against.

A parent release can only have been built and tested against majors of its child that
existed when it was uploaded: ``mcp-agent 0.2.6`` (uploaded 2025-12-05) declares
``mcp>=1.x`` with no upper bound, and mcp 2.0.0 came out 2026-07-28, so 0.2.6 was never
tested with mcp 2. This reads, from the index pages already in hand (no extra request),
the upload time of each span's parent release and of the first final release of each
major its range admits, for the AG101 rule to rank its fixes by.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping

from packaging.version import InvalidVersion, Version

from agentguard.facts.times import parse_time
from agentguard.lock.graph import PROJECT, LockGraph, major_groups
from agentguard.lock.pages import IndexFile, ProjectPage


def earliest_upload(files: list[IndexFile]) -> str | None:
    """The earliest upload time of ``files`` (UTC, seconds), None when none gives one."""
    return earliest_time([f.upload_time for f in files if f.upload_time])


def earliest_time(texts: list[str]) -> str | None:
    """The earliest of these upload times (UTC, seconds), None when none reads as one."""
    times = [t for t in (parse_time(x) for x in texts) if t is not None]
    if not times:
        return None
    return min(times).astimezone(dt.timezone.utc).replace(microsecond=0).isoformat()


def span_dates(
    graph: LockGraph,
    released: Mapping[str, list[Version]],
    pages: Mapping[str, ProjectPage],
) -> tuple[dict[str, dict[str, str]], dict[str, str]]:
    """(child -> major -> first upload of that major, "parent==version" -> its upload) for
    every edge that admits two or more majors. Missing upload times are left out (unknown)."""
    majors: dict[str, dict[str, str]] = {}
    releases: dict[str, str] = {}
    children: set[str] = set()
    for e in graph.edges:
        if e.admitted_majors is None or len(e.admitted_majors) <= 1:
            continue
        children.add(e.child)
        if e.parent == PROJECT or not e.parent_version:
            continue
        key = f"{e.parent}=={e.parent_version}"
        page = pages.get(e.parent)
        if key in releases or page is None:
            continue
        try:
            version = Version(e.parent_version)
        except InvalidVersion:
            continue
        when = earliest_time(page.upload_times(version))
        if when is not None:
            releases[key] = when
    for child in sorted(children):
        page = pages.get(child)
        versions = released.get(child)
        if page is None or not versions:
            continue
        out: dict[str, str] = {}
        for major, members in major_groups(versions):
            when = earliest_time(page.upload_times(members[-1]))  # its oldest final release
            if when is not None:
                out[major] = when
        if out:
            majors[child] = out
    return majors, releases
