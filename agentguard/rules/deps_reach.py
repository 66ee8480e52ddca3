"""Which pins of a child an AG101 edge reaches, and where its cap applies (facts only)."""

from __future__ import annotations

from packaging.version import InvalidVersion, Version

from agentguard.facts.environments import EnvironmentTable, both
from agentguard.facts.graph import PROJECT, DependencyEdge, LockGraph
from agentguard.facts.pins import LockedPackage


class Reach:
    """Which pins of a child an edge reaches (built only when some child is forked)."""

    def __init__(self, graph: LockGraph) -> None:
        self.graph = graph
        self._table: EnvironmentTable | None = None
        self._disjoint_caps: dict[tuple[str, str, str | None], bool] = {}

    @property
    def table(self) -> EnvironmentTable:
        if self._table is None:
            markers = [p.marker for p in self.graph.packages]
            self._table = EnvironmentTable([*markers, *(e.marker for e in self.graph.edges)])
        return self._table

    def cap_marker(self, edge: DependencyEdge, pin: LockedPackage) -> str | None:
        """Where the cap of ``edge`` over ``pin`` applies: the pin's marker and, when the
        parent is pinned once with a marker, the parent pin's too (a cap from one fork's
        parent must not move the other fork, nor hold where its parent is not installed).
        Unless the caps over this pin would then overlap without being one cap: two caps
        over one environment can exclude each other (fast-agent-mcp: uvicorn capped at 0.54
        for fastmcp-slim, installed on Python 3.12 and later only, and at 0.34 for
        ``mcp==1.10.1`` below 3.12; the first cap, offered everywhere, and the second, below
        3.12, did not resolve together); then every span caps where the pin applies, and
        the spans over it are ranked as one group."""
        own = self._restricted(edge, pin)
        if own == pin.marker or self._disjoint(edge.child, pin):
            return own
        return pin.marker

    def _disjoint(self, child: str, pin: LockedPackage) -> bool:
        key = (child, pin.version, pin.marker)
        known = self._disjoint_caps.get(key)
        if known is None:
            markers = {
                self._restricted(e, pin)
                for e in self.graph.edges_into(child)
                if e.admitted_majors is not None
                and len(e.admitted_majors) > 1
                and pin in self.pins(e)
            }
            t = self.table
            masks = [t.mask(m) & t.mask(pin.marker) for m in sorted(markers, key=str)]
            # a marker that selects none of the environments modelled (`platform_system ==
            # 'darwin'`: the table models sys_platform) tells nothing: not disjoint then
            known = len(masks) <= 1 or (
                0 not in masks
                and all(a & b == 0 for i, a in enumerate(masks) for b in masks[i + 1 :])
            )
            self._disjoint_caps[key] = known
        return known

    def _restricted(self, edge: DependencyEdge, pin: LockedPackage) -> str | None:
        """The pin's marker and, when the parent is pinned once with a marker (one fork's
        release, or a package some Pythons or platforms only install), that parent pin's,
        unless the pin is installed only where the parent is anyway."""
        if edge.parent == PROJECT:
            return pin.marker
        graph = self.graph
        mine = [p for p in graph.versions_of(edge.parent) if p.version == edge.parent_version]
        if len(mine) != 1 or not mine[0].marker:
            return pin.marker
        t = self.table
        if t.mask(pin.marker) & ~t.mask(mine[0].marker) & t.all == 0:
            return pin.marker
        return both(pin.marker, mine[0].marker)

    def pins(self, edge: DependencyEdge) -> list[LockedPackage]:
        pins = sorted(self.graph.versions_of(edge.child), key=lambda p: order(p.version))
        if len(pins) <= 1:
            return pins
        t = self.table
        mask = self.edge_mask(edge)
        reached = [p for p in pins if t.mask(p.marker) & mask]
        return reached or pins

    def edge_mask(self, edge: DependencyEdge) -> int:
        """The environments where ``edge`` applies (its marker, and its parent's pins)."""
        t = self.table
        mask = t.mask(edge.marker)
        if edge.parent != PROJECT:
            parents = [
                p for p in self.graph.versions_of(edge.parent) if p.version == edge.parent_version
            ]
            if parents:
                m = 0
                for p in parents:
                    m |= t.mask(p.marker)
                mask &= m
        return mask

    def unmitigated(
        self, edge: DependencyEdge, pin: LockedPackage, caps: list[DependencyEdge]
    ) -> int:
        """The environments of this finding that none of the project's one-major ``caps``
        reaches (a cap mitigates exactly where its marker holds)."""
        t = self.table
        mask = self.edge_mask(edge) & t.mask(pin.marker)
        for c in caps:
            mask &= ~t.mask(c.marker) if c.marker else 0
        return mask & t.all

    def where(self, mask: int) -> str:
        """The environments in ``mask``, named by platform when every Python is in it."""
        t = self.table
        envs = [e for i, e in enumerate(t.environments) if mask >> i & 1]
        pythons = {e.python for e in t.environments}
        platforms = sorted({e.platform for e in envs})
        if all(
            {e.python for e in envs if e.platform == p} == pythons for p in platforms
        ) and platforms != ["any platform"]:
            return ", ".join(platforms)
        return t.describe(mask)


def order(version: str) -> Version:
    try:
        return Version(version)
    except InvalidVersion:
        return Version("0")
