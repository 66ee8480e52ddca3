"""Facts about AG101's first fixes taken together: the ranked caps of each package, and
what the real resolver said of them as one set (frozen records; the rules read them)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

GroupKey = tuple[str, str | None, str]  # (child, the cap's marker, the locked version)


@dataclass(frozen=True)
class Cap:
    """One candidate cap of a package: ``text`` is the requirement line (marker included)."""

    major: str
    text: str
    after: int  # spans whose parent was uploaded before this major first shipped
    locked: bool  # the locked major: the lock itself holds it


@dataclass(frozen=True)
class FixGroup:
    """Every AG101 span over one pin of ``child`` (where its cap applies: ``marker``), with
    the caps that fit all of them, ranked (the evidence's first choice first)."""

    child: str
    marker: str | None
    locked_version: str
    spans: tuple[str, ...]  # the parents that declare the range ("pkg==1.0", "the project")
    candidates: tuple[Cap, ...]
    own_first: tuple[str, ...]  # each span's own first cap, alone

    @property
    def key(self) -> GroupKey:
        return (self.child, self.marker, self.locked_version)


RESOLVES = "resolves"  # the chosen caps resolve together (checked with the resolver)
CONFLICT = "conflict"  # some group has no candidate that resolves with the others
UNCHECKED = "unchecked"  # not checked (see reason): the caps are each right alone


@dataclass(frozen=True)
class FixSetCheck:
    """The first fixes resolved as one set, beside the project's own requirements.

    ``chosen``: the candidate (an index into the group's ``candidates``) each group offers
    first, so that all of them resolve together; a group in ``conflicts`` has none (its
    value: the caps of the other groups its candidates do not resolve with)."""

    status: str
    reason: str
    chosen: Mapping[GroupKey, int] = field(default_factory=dict)
    conflicts: Mapping[GroupKey, tuple[str, ...]] = field(default_factory=dict)
    resolver_runs: int = 0
    cached: bool = False
