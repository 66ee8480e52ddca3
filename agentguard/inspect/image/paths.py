"""A path in an image resolved as the kernel resolves it, against the merged layers' links.

Every component is looked up in turn (a link in the middle of a path is followed, not only
one at its end); an absolute target restarts at the root, a relative one at the link's own
folder; ``..`` goes to the parent of the folder actually reached (``/..`` is ``/``); more
than :data:`MAX_HOPS` links (Linux's ``MAXSYMLINKS``) is a loop. A path that leads into a
filesystem the kernel provides at run time (``/proc``, ``/sys``, ``/dev``) cannot be read
from the image. Pure: ``links`` maps absolute paths to their link targets, as the merged
view of the layers has them (see :mod:`.merge`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

MAX_HOPS = 40  # the kernel's MAXSYMLINKS: ELOOP past it
RUNTIME_TOPS = frozenset({"proc", "sys", "dev"})


@dataclass(frozen=True)
class Resolution:
    """Where a path leads. ``path`` is absolute; ``error``/``code`` say why it could not be
    followed (``path`` is then where the walk stopped); ``via`` lists the links taken."""

    path: str
    via: tuple[tuple[str, str], ...] = ()  # (link, its target), in the order followed
    code: str | None = None  # "link-loop" | "link-into-runtime-fs"
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.code is None

    @property
    def linked(self) -> bool:
        return bool(self.via)

    def shown(self, literal: str) -> str:
        """``literal -> real`` when links led elsewhere, else the path."""
        return f"{literal} -> {self.path}" if self.via and self.path != literal else literal


def resolve_path(links: Mapping[str, str], path: str, *, max_hops: int = MAX_HOPS) -> Resolution:
    """``path`` (absolute) through every link on the way, the final component included."""
    pending = [c for c in reversed(path.split("/")) if c]
    done: list[str] = []
    via: list[tuple[str, str]] = []
    while pending:
        part = pending.pop()
        if part == ".":
            continue
        if part == "..":
            if done:
                done.pop()
            continue
        here = "/" + "/".join([*done, part])
        target = links.get(here)
        if target is None:
            done.append(part)
            continue
        via.append((here, target))
        if len(via) > max_hops:
            return Resolution(
                here,
                tuple(via),
                "link-loop",
                f"more than {max_hops} symbolic links on the way to {path} (a loop, or a "
                "chain longer than the kernel follows): the kernel refuses it (ELOOP)",
            )
        if target.startswith("/"):
            done = []
        pending.extend(c for c in reversed(target.split("/")) if c)
    real = "/" + "/".join(done)
    if via and done and done[0] in RUNTIME_TOPS:
        return Resolution(
            real,
            tuple(via),
            "link-into-runtime-fs",
            f"{path} leads through links to {real}, in /{done[0]}: a filesystem the kernel "
            "provides when the container runs, not part of the image",
        )
    return Resolution(real, tuple(via))
