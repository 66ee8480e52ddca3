"""The fix an AG101 finding offers: its group's cap, as checked with the others (no I/O).

A span's own first fix (:func:`agentguard.rules.deps_span_fix.span_fix`) stands when its
group (every span over the same pin) offers the same cap first and, where the lock side
resolved the first fixes together (:class:`FixSetCheck`), that cap resolved with the
rest. Otherwise the fix names the cap the group offers instead and why, or, when no
candidate the evidence allows resolves with the rest, says plainly which caps conflict and
offers no snippet: a set of fixes that does not install is never offered.
"""

from __future__ import annotations

import dataclasses

from agentguard import escape
from agentguard.facts.fixes import CONFLICT, RESOLVES, Cap, FixGroup, FixSetCheck
from agentguard.findings import Fix, JSONValue
from agentguard.rules.deps_span_fix import relock_command


def _listed(items: tuple[str, ...] | list[str]) -> str:
    shown = [f"`{i}`" for i in items[:4]]
    if len(items) > 4:
        shown.append(f"{len(items) - 4} more")
    return ", ".join(shown)


def choice(group: FixGroup, fixes: FixSetCheck | None) -> tuple[Cap | None, str]:
    """The cap the group offers first (None: none resolves with the rest) and the set's
    status for it: "resolves", "conflict", or "unknown" (not checked together)."""
    if fixes is not None and group.key in fixes.conflicts:
        return None, CONFLICT
    if not group.candidates:
        return None, "unknown"
    if fixes is not None and fixes.status in (RESOLVES, CONFLICT) and group.key in fixes.chosen:
        return group.candidates[fixes.chosen[group.key]], RESOLVES
    return group.candidates[0], "unknown"


def group_fix(
    own: Fix, group: FixGroup, fixes: FixSetCheck | None, evidence: dict[str, JSONValue]
) -> Fix:
    """The finding's fix, given its own (``own``) and its group's choice."""
    fix = _group_fix(own, group, fixes, evidence)
    if fixes is not None and evidence.get("fix_set") == "unknown":
        # the lock tried and could not say: the fix says so (offline, nothing was tried)
        reason = f" Not checked together with the other first fixes: {fixes.reason}."
        return dataclasses.replace(fix, description=fix.description + reason)
    return fix


def _group_fix(
    own: Fix, group: FixGroup, fixes: FixSetCheck | None, evidence: dict[str, JSONValue]
) -> Fix:
    cap, status = choice(group, fixes)
    evidence["fix_set"] = status
    if fixes is not None and status != RESOLVES:
        evidence["fix_set_reason"] = fixes.reason
    child = group.child
    spans = list(group.spans)
    if cap is None:
        if not group.candidates:
            return own
        first_text = group.candidates[0].text
        others = fixes.conflicts.get(group.key, ()) if fixes is not None else ()
        evidence["fix_conflicts_with"] = list(others)
        against = _listed(others) if others else "the project's own requirements"
        return Fix(
            f"No cap of {child} that {_listed(spans)} can all have been built against "
            f"resolves together with the other first fixes: `{first_text}` does not resolve with "
            f"{against} (checked with the resolver). Decide which of these packages to hold "
            f"back, test your code with that choice, cap it, and re-lock; a cap at the locked "
            f"{child} major only once your code has been tested against it."
        )
    if escape.snippet(cap.text) == own.snippet:
        return own
    evidence["first_fix"] = cap.text
    cross = (
        ""
        if cap.locked
        else f", then re-lock with `{relock_command(child)}` (the lock moves {child} off "
        f"{group.locked_version}, a major crossing the re-lock gate stops otherwise)"
    )
    first = group.candidates[0]
    if cap is not first:
        why = (
            f"`{first.text}`, the first choice by the evidence, does not resolve together with "
            f"the other first fixes; `{cap.text}` does (checked with the resolver)"
        )
    else:
        basis = (
            f"{child} {cap.major} first shipped before each of them was uploaded, as far as "
            "the index's upload times tell"
            if cap.after == 0
            else f"{cap.after} of them were uploaded before {child} {cap.major} first "
            "shipped, the fewest of any major they all admit"
        )
        why = (
            f"{len(spans)} packages declare {child} ({_listed(spans)}) and your requirements "
            f"hold one cap of it: {basis}"
        )
    alone = f" (this range alone would take `{own.snippet}`)" if own.snippet else ""
    return Fix(
        f"Add `{cap.text}` to your requirements{cross}: {why}{alone}.",
        snippet=escape.snippet(cap.text),
    )
