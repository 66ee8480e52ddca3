"""The findings over the graph of a project's own lock (uv, Poetry, another PEP 751
writer), for both flows over it (:mod:`.existing_flow`, :mod:`.uv_project`). The rules are
imported when first used (a re-lock imports them while `uv lock` runs)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentguard.findings import Finding

if TYPE_CHECKING:
    from agentguard.config import DepsPolicy
    from agentguard.lock.existing import ExistingAnalysis


def graph_findings(analysis: ExistingAnalysis, policy: DepsPolicy) -> list[Finding]:
    """AG101, AG105 and AG107 (a pin from an index nobody configured: AG107 says its ranges
    are unread, so it is not AG105's "sdist only" too)."""
    from agentguard.rules.deps import check_unknown_metadata
    from agentguard.rules.deps_index import check_unconfigured_indexes
    from agentguard.rules.deps_spans import check_major_spans

    foreign = {name for name, _v, _i, _l in analysis.unconfigured}
    unknown = [
        f
        for f in check_unknown_metadata(analysis.graph)
        if f.evidence.get("package") not in foreign
    ]
    return [
        *check_major_spans(analysis.graph, policy),
        *unknown,
        *check_unconfigured_indexes(analysis.lock_path, analysis.unconfigured),
    ]
