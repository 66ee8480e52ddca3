"""The image's files as the agent opens them: every path through the merged layers' links.

:class:`ImagePaths` resolves a wanted path the way the kernel would (:mod:`.paths`) and
finds what one read collected there. A path behind a link that cannot be followed (a loop,
a chain over the kernel's cap, into ``/proc``), or whose target this read did not collect,
is a failed source with the reason, never "not in the image"; the targets not collected
are remembered (:attr:`ImagePaths.unread`) so a second read can collect them.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

from agentguard.findings import Source
from agentguard.inspect.facts import FileContent, FileEntry, ImageFacts
from agentguard.inspect.image.agentplan import CONTENT, AgentPlan, always_kind, link_plan
from agentguard.inspect.image.paths import Resolution, resolve_path

KIND = "image-agent"


@dataclass(frozen=True)
class Opened:
    """What a wanted path leads to. ``state``: "found" | "absent" | "unread" | "failed"."""

    literal: str
    resolution: Resolution
    state: str
    content: FileContent | None = None
    entry: FileEntry | None = None

    @property
    def path(self) -> str:
        return self.resolution.path


@dataclass
class ImagePaths:
    image: ImageFacts
    plan: AgentPlan
    links: dict[str, str] = field(init=False)
    by_path: dict[str, FileContent] = field(init=False)
    entries: dict[str, FileEntry] = field(init=False)
    collected: AgentPlan = field(init=False)
    unread: set[str] = field(default_factory=set)  # link_plan notation
    sources: list[Source] = field(default_factory=list)
    _reported: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.links = dict(self.image.symlinks)
        self.by_path = {c.path: c for c in self.image.contents}
        self.entries = {e.path: e for e in self.image.agent_entries}
        self.collected = link_plan(self.image.link_wants)

    def resolve(self, path: str) -> Resolution:
        return resolve_path(self.links, posixpath.normpath(path) if path else "/")

    def open(self, path: str) -> Opened:
        """A file wanted at ``path`` (absolute)."""
        res = self.resolve(path)
        if not res.ok:
            self._fail(path, res.error or "", res.code or "link-unresolved")
            return Opened(path, res, "failed")
        real = res.path
        content, entry = self.by_path.get(real), self.entries.get(real)
        if content is not None or entry is not None:
            return Opened(path, res, "found", content, entry)
        if not res.linked:
            return Opened(path, res, "absent")
        if not self._collected(real[1:]):
            self.unread.add(real[1:])
            self._fail(
                path,
                f"{res.shown(path)} through links: this read did not collect the link's "
                "target, so what the agent reads there is unknown",
                "link-target-unread",
            )
            return Opened(path, res, "unread")
        if not self.image.symlinks_complete:
            self._fail(path, self.incomplete(res.shown(path)), "link-index-incomplete")
            return Opened(path, res, "failed")
        return Opened(path, res, "absent")

    def folder(self, path: str, want: str) -> tuple[Resolution, str | None]:
        """The real folder ``path`` leads to, for its code (``want`` "/") or its ``*.json``
        (``want`` "/*"): the resolution, and the folder (absolute) when its files were
        collected; an uncollected folder behind a link is remembered and a failed source."""
        res = self.resolve(path)
        if not res.ok:
            self._fail(path, res.error or "", res.code or "link-unresolved")
            return res, None
        if not res.linked:
            return res, res.path
        return res, (res.path if self.need_folder(res.path, want, res.shown(path)) else None)

    def need_folder(self, real: str, want: str, shown: str) -> bool:
        """Whether the read collected the folder ``real`` (absolute) for ``want``; if not,
        it is remembered for the next read and a failed source says so."""
        rel = real[1:] + want
        if rel in self.collected.trees or rel[:-1] in self.collected.config_dirs:
            return True
        if want == "/" and rel in self.plan.trees:
            return True
        self.unread.add(rel)
        self._fail(
            shown,
            f"{shown} through links: this read did not collect that folder's files, so "
            "what the agent reads there is unknown",
            "link-target-unread",
        )
        return False

    def present(self, opened: Opened, why: str) -> tuple[FileContent, str]:
        """A file as the agent names it: under the path it opens, the real one in ``why``."""
        content = opened.content
        assert content is not None
        if not opened.resolution.linked or opened.path == opened.literal:
            return content, why
        shown = FileContent(opened.literal, content.layer_digest, content.data, content.truncated)
        return shown, f"{why} ({opened.resolution.shown(opened.literal)} through links)"

    def incomplete(self, what: str) -> str:
        return (
            f"{what}: not found in the layers read, and the image's links are not all known "
            "(a layer was not read, or the max_link_names cap was hit): where the path leads "
            "and whether the file is there is unknown"
        )

    def _collected(self, rel: str) -> bool:
        if self.collected.wants(rel) is not None or self.plan.wants(rel) == "exact":
            return True
        return always_kind(rel) == CONTENT

    def _fail(self, path: str, reason: str, code: str) -> None:
        if path in self._reported:
            return
        self._reported.add(path)
        self.sources.append(Source.failed(KIND, path, reason, error_code=code, retryable=False))
