"""Layer scans merged in chain order into the final filesystem view, whiteouts applied.

Overlay semantics (as the engine applies layers): ``.wh.<name>`` deletes ``<name>`` and all
below it from lower layers; ``.wh..wh..opq`` hides everything a lower layer put in that
folder; a non-directory written over a lower directory hides that directory's contents.
Entries of the same layer are never hidden by its own whiteouts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

from agentguard.inspect.facts import FileContent, FileEntry, InstalledDist
from agentguard.inspect.image.agentplan import CONTENT, AgentPlan, always_kind
from agentguard.inspect.image.collect import Metadata, Scope, is_metadata
from agentguard.inspect.image.layerscan import LayerScan, Problem, Rec
from agentguard.inspect.image.tarwalk import display

T = TypeVar("T")


@dataclass(frozen=True)
class Merged:
    entries: tuple[FileEntry, ...]
    truncated: bool
    contents: tuple[FileContent, ...]
    installed: tuple[InstalledDist, ...]
    sockets: tuple[str, ...]
    problems: tuple[Problem, ...]
    agent_entries: tuple[FileEntry, ...] = ()
    speculative_dropped: int = 0
    symlinks: tuple[tuple[str, str], ...] = ()  # (absolute path, target) of the merged view


def merge(
    layers: Sequence[tuple[int, str, LayerScan | None]],
    workdir: str | None,
    *,
    max_entries: int,
    listing_truncated: bool,
    plan: AgentPlan | None = None,
) -> Merged:
    """``layers``: (index, digest, scan or None when unread) in chain order, base first.

    ``workdir`` is relative ("" = the root); None when unknown (nothing is listed).
    """
    scope = Scope([workdir]) if workdir is not None else None
    tree: dict[str, tuple[int, Rec]] = {}
    contents: dict[str, tuple[int, tuple[bytes, bool]]] = {}
    dists: dict[str, tuple[int, Metadata]] = {}
    sockets: dict[str, int] = {}
    ancestors: dict[str, str] = {}
    agents: dict[str, tuple[int, Rec]] = {}
    links: dict[str, str] = {}
    lower: list[LayerScan] = []
    dropped = 0
    wants = plan.wants if plan is not None else None
    for index, _digest, scan in layers:
        if scan is None:
            continue
        replaced = {
            n for n, rec in scan.tree.items() if rec[0] != "dir" and tree.get(n, _NO)[1][0] == "dir"
        }
        replaced.update(
            n for n, kind in scan.ancestors.items() if kind != "dir" and ancestors.get(n) == "dir"
        )
        # a link written over a lower folder hides what the lower layers put in it
        replaced.update(n for n in scan.links if any(n in s.dirs for s in lower))
        lower.append(scan)
        if scan.whiteouts or scan.opaque or replaced:
            deleted, below = scan.whiteouts, scan.opaque | replaced
            _hide(tree, deleted, below)
            _hide(contents, deleted, below)
            _hide(dists, deleted, below)
            _hide(sockets, deleted, below)
            _hide(ancestors, deleted, below)
            _hide(agents, deleted, below)
            _hide(links, deleted, below)
        _layer_links(links, scan)
        for name, rec in scan.tree.items():
            if scope is not None and scope.covers(name):
                tree[name] = (index, rec)
        for name, content in scan.contents.items():
            if (
                (scope is not None and scope.covers(name))
                or _anywhere(name)
                or (wants is not None and wants(name) is not None)
            ):
                contents[name] = (index, content)
        for name, rec in scan.agent_entries.items():
            agents[name] = (index, rec)
        dropped += scan.speculative_dropped
        for name, meta in scan.dists.items():
            dists[name] = (index, meta)
        for name in scan.sockets:
            sockets[name] = index
        ancestors.update(scan.ancestors)
    digests = {index: digest for index, digest, _ in layers}
    chosen = sorted(tree.items(), key=lambda kv: (not kv[1][1][4], kv[0].count("/"), kv[0]))
    kept = sorted(chosen[:max_entries])
    entries = tuple(
        FileEntry(
            path="/" + display(name),
            layer_index=index,
            layer_digest=digests[index],
            kind=rec[0],
            size=rec[1],
            mode=rec[2],
            link_target=rec[3],
        )
        for name, (index, rec) in kept
    )
    return Merged(
        entries=entries,
        truncated=listing_truncated or len(chosen) > max_entries,
        contents=tuple(
            FileContent("/" + display(name), digests[index], data, cut)
            for name, (index, (data, cut)) in sorted(contents.items())
        ),
        installed=tuple(
            sorted(
                (_installed(name, meta, digests[index]) for name, (index, meta) in dists.items()),
                key=lambda d: (d.name, d.location, d.metadata_path),
            )
        ),
        sockets=tuple("/" + display(n) for n in sorted(sockets)),
        problems=_workdir_problems(workdir, ancestors),
        agent_entries=tuple(
            FileEntry("/" + display(n), i, digests[i], rec[0], rec[1], rec[2], rec[3])
            for n, (i, rec) in sorted(agents.items())
        ),
        speculative_dropped=dropped,
        symlinks=tuple(("/" + display(n), display(t)) for n, t in sorted(links.items())),
    )


def _layer_links(links: dict[str, str], scan: LayerScan) -> None:
    """Apply one layer to the merged links: a folder or a file it writes where a lower
    layer had a link replaces that link; its own links replace what was there."""
    if links:
        written = scan.dirs, scan.contents, scan.agent_entries, scan.tree
        gone = [n for n in links if n not in scan.links and any(n in w for w in written)]
        for n in gone:
            del links[n]
    links.update(scan.links)


_NO: tuple[int, Rec] = (-1, ("", 0, 0, None, False))


def _anywhere(name: str) -> bool:
    return is_metadata(name) or always_kind(name) == CONTENT


def _hide(state: dict[str, T], deleted: set[str], below: set[str]) -> None:
    """Drop names in ``deleted`` (and below them) and names strictly below ``below``."""
    if "" in below or "" in deleted:
        for name in [n for n in state if n]:
            del state[name]
        return
    doomed = [name for name in state if _hidden(name, deleted, below)]
    for name in doomed:
        del state[name]


def _hidden(name: str, deleted: set[str], below: set[str]) -> bool:
    if name in deleted:
        return True
    i = name.rfind("/")
    while i > 0:
        parent = name[:i]
        if parent in deleted or parent in below:
            return True
        i = name.rfind("/", 0, i)
    return False


def _installed(name: str, meta: Metadata, digest: str) -> InstalledDist:
    dist_info = name.rsplit("/", 1)[0]
    location = dist_info.rsplit("/", 1)[0] if "/" in dist_info else ""
    return InstalledDist(
        name=meta.name,
        version=meta.version,
        location="/" + display(location),
        metadata_path="/" + display(name),
        layer_digest=digest,
        requires=meta.requires,
    )


def _workdir_problems(workdir: str | None, ancestors: dict[str, str]) -> tuple[Problem, ...]:
    """A working directory reached through a symlink is not where the tar put its files."""
    if not workdir:
        return ()
    parts = workdir.split("/")
    for i in range(1, len(parts) + 1):
        name = "/".join(parts[:i])
        kind = ancestors.get(name)
        if kind in (None, "dir"):
            continue
        path = "/" + display(name)
        if kind == "symlink":
            reason = (
                f"{path} is a symlink in the image; the engine follows it, this reader does "
                "not: the working directory's entries were not listed"
            )
            return (Problem(path, "workdir-symlink", reason),)
        reason = f"{path} is a {kind}, not a directory: the working directory cannot be listed"
        return (Problem(path, "workdir-not-directory", reason),)
    return ()
