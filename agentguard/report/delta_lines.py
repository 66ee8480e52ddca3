"""The lines of a ``check --base`` delta (``facts["delta"]`` of the report), for the text
report and the Markdown summary. Values are the repository's: each channel escapes them
(``code`` marks a value; the caller quotes it for its channel)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

Quote = Callable[[str], str]


def _where(f: Mapping[str, Any]) -> str:
    locs = f.get("locations") or []
    if not locs:
        return "(no location)"
    loc = locs[0]
    path = str(loc.get("path") or loc.get("layer") or "")
    return f"{path}:{loc['line']}" if loc.get("line") else path


def headline(delta: Mapping[str, Any], q: Quote) -> str:
    base = delta.get("base") or {}
    ref = q(str(base.get("ref")))
    commit = str(base.get("commit") or "")[:12]
    at = f"{ref} ({q(commit)})" if commit else ref
    if not base.get("compared"):
        return f"Change since {at}: the base could not be read, nothing is known to be new"
    return (
        f"Change since {at}: {delta['new']} new finding(s) "
        f"({delta['new_at_or_above_fail_on']} at or above fail-on), "
        f"{len(delta['resolved'])} resolved, {delta['unchanged']} unchanged"
    )


def resolved_lines(delta: Mapping[str, Any], q: Quote) -> list[str]:
    out = []
    for f in delta.get("resolved") or []:
        out.append(
            f"{str(f['severity']).upper()} {f['rule_id']} {q(_where(f))}: {q(str(f['title']))}"
        )
    return out


def lock_lines(delta: Mapping[str, Any], q: Quote) -> list[str]:
    out = []
    for d in delta.get("locks") or []:
        lock = q(str(d["lock"]))
        if d["status"] == "unknown":
            out.append(f"{lock}: delta unknown ({q(str(d.get('reason')))})")
            continue
        if d["status"] == "unchanged":
            continue
        for c in d["crosses_major"]:
            base, head = ", ".join(c["base"]), ", ".join(c["head"])
            way = {"up": "a new major", "down": "back to an older major"}.get(
                c["direction"], "majors added and removed"
            )
            out.append(f"{lock}: {q(c['package'])} {q(base)} -> {q(head)} ({way})")
        parts = []
        if d["added"]:
            parts.append(f"{len(d['added'])} package(s) added")
        if d["removed"]:
            parts.append(f"{len(d['removed'])} removed")
        if d["status"] in ("added", "removed"):
            parts.insert(0, f"the lock file is {d['status']}")
        if parts:
            out.append(f"{lock}: " + ", ".join(parts))
    return out


def growth_lines(delta: Mapping[str, Any], q: Quote) -> list[str]:
    return [
        f"growth the policy forbids ({g['kind']}): {q(str(g['what']))}"
        for g in delta.get("growth") or []
    ]


def agent_lines(delta: Mapping[str, Any], q: Quote) -> list[str] | None:
    """Per agent, ``+``/``-`` lines of what changed; None: the maps were not compared."""
    caps = delta.get("capabilities")
    if caps is None:
        return None
    out = []
    for a in caps.get("agents") or []:
        out.append(f"{q(str(a['agent']))} ({a['status']})")
        for aspect, change in a["changes"].items():
            label = aspect.replace("_", " ")
            out += [f"  + {label}: {q(str(x))}" for x in change["added"]]
            out += [f"  - {label}: {q(str(x))}" for x in change["removed"]]
    return out
