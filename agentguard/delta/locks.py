"""The lock delta of a change: per lock file, the packages added, removed, and every
package whose version crosses a major between the base's lock and the head's."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from packaging.version import InvalidVersion, Version

from agentguard.findings import JSONValue

# uv.lock, poetry.lock, pylock.toml (their readers); requirements locks by name
_REQUIREMENTS = re.compile(r"^requirements[\w.-]*\.(lock|txt)$")


@dataclass(frozen=True)
class MajorCrossing:
    lock: str
    package: str
    base: tuple[str, ...]  # the versions the base's lock holds
    head: tuple[str, ...]
    direction: str  # "up" | "down" | "both"

    def to_json(self) -> dict[str, JSONValue]:
        return {
            "lock": self.lock,
            "package": self.package,
            "base": list(self.base),
            "head": list(self.head),
            "direction": self.direction,
        }


@dataclass(frozen=True)
class LockDelta:
    lock: str
    status: str  # "changed" | "unchanged" | "added" | "removed" | "unknown"
    added: tuple[str, ...] = ()  # "name==version"
    removed: tuple[str, ...] = ()
    crossings: tuple[MajorCrossing, ...] = ()
    reason: str | None = None  # why "unknown"

    def to_json(self) -> dict[str, JSONValue]:
        return {
            "lock": self.lock,
            "status": self.status,
            "added": list(self.added),
            "removed": list(self.removed),
            "crosses_major": [c.to_json() for c in self.crossings],
            "reason": self.reason,
        }


class _Unreadable(Exception):
    pass


def _lock_names(folder: Path) -> set[str]:
    from agentguard.lock.readers import READERS

    try:
        names = {p.name for p in folder.iterdir()}
    except OSError:
        return set()
    own = {r.filename for r in READERS}
    return {n for n in names if n in own or _REQUIREMENTS.match(n)}


def _pins(folder: Path, name: str) -> dict[str, set[str]]:
    """name -> versions in one lock ("" for an entry with no exact version)."""
    from agentguard.lock.readers import READERS, LockReadError, read_lock, read_lock_text
    from agentguard.lock.requirements_text import parse_requirements_lock

    path = folder / name
    try:
        text = read_lock_text(path, name)
        reader = next((r for r in READERS if r.filename == name), None)
        out: dict[str, set[str]] = {}
        if reader is not None:
            for pin in read_lock(reader, text, name).pins:
                out.setdefault(pin.name, set()).add(pin.version)
        else:
            for pkg in parse_requirements_lock(text)[0]:
                out.setdefault(pkg.name, set()).add(pkg.version)
        return out
    except (LockReadError, ValueError, RecursionError) as exc:
        raise _Unreadable(str(exc)) from None


def _majors(versions: set[str]) -> set[int] | None:
    out = set()
    for v in versions:
        try:
            out.add(Version(v).major)
        except InvalidVersion:
            return None  # a version that is not one (a path, a URL): unknown
    return out


def _crossing(lock: str, name: str, base: set[str], head: set[str]) -> MajorCrossing | None:
    old, new = _majors(base), _majors(head)
    if old is None or new is None or old == new:
        return None
    up = max(new) > max(old) or min(new) > min(old)
    down = max(new) < max(old) or min(new) < min(old)
    direction = "both" if up and down else ("up" if up else "down")
    return MajorCrossing(lock, name, tuple(sorted(base)), tuple(sorted(head)), direction)


def _label(name: str, versions: set[str]) -> str:
    return ", ".join(f"{name}=={v}" if v else name for v in sorted(versions))


def lock_delta(base: Path, head: Path) -> tuple[LockDelta, ...]:
    """Compare every lock the two folders hold (same file name on both sides)."""
    out = []
    for name in sorted(_lock_names(base) | _lock_names(head)):
        sides: list[dict[str, set[str]] | None] = []
        why = None
        for folder in (base, head):
            if not (folder / name).exists() and not (folder / name).is_symlink():
                sides.append(None)
                continue
            try:
                sides.append(_pins(folder, name))
            except _Unreadable as exc:
                why = f"{'base' if folder == base else 'head'}: {exc}"
                break
        if why is not None:
            out.append(LockDelta(name, "unknown", reason=why))
            continue
        old, new = sides
        status = "added" if old is None else "removed" if new is None else "changed"
        old, new = old or {}, new or {}
        added = tuple(_label(n, new[n]) for n in sorted(new.keys() - old.keys()))
        removed = tuple(_label(n, old[n]) for n in sorted(old.keys() - new.keys()))
        crossings = tuple(
            c
            for n in sorted(old.keys() & new.keys())
            if old[n] != new[n] and (c := _crossing(name, n, old[n], new[n])) is not None
        )
        if status == "changed" and old == new:
            status = "unchanged"
        out.append(LockDelta(name, status, added, removed, crossings))
    return tuple(out)
