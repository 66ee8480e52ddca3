"""What one layer scan holds and the caps it shares with the image's other layers.

Split from :mod:`.layerscan` (the walk) so the agent collection (:mod:`.agentscan`) can use
the same state and the same capped body reader without an import cycle.
"""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Protocol

from agentguard.inspect.image.agentplan import AgentPlan
from agentguard.inspect.image.bytestreams import Budget
from agentguard.inspect.image.collect import Metadata
from agentguard.inspect.image.hashing import Hasher, digest_result
from agentguard.inspect.image.limits import Limits, ReadFailure
from agentguard.inspect.image.tarwalk import EntryCount, display, normalise

# (kind, size, mode, link target, notable)
Rec = tuple[str, int, int, str | None, bool]


class BodyReader(Protocol):
    def read_body(self, limit: int) -> bytes: ...


class EntryFields(Protocol):
    """What collection needs of an entry: a tar header's, or a logged one's."""

    @property
    def kind(self) -> str: ...
    @property
    def size(self) -> int: ...
    @property
    def mode(self) -> int: ...
    @property
    def link(self) -> str | None: ...


class Budgets:
    """Caps shared by all layers of one image."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.bytes = Budget(limits.max_image_bytes)
        self.entries = EntryCount(limits.max_entries_per_image)
        self.content_left = limits.max_content_bytes
        self.code_left = limits.max_code_files
        self.tracked_left = limits.max_tracked_entries
        self.notable_left = limits.max_tracked_entries
        self.agent_code_left = limits.max_code_files  # the agent's source tree / package
        self.speculative_left = limits.max_code_files  # wrapper targets kept on spec
        self.link_names_left = limits.max_link_names  # symlinks and folders recorded
        self.links_truncated = False
        self.listing_truncated = False


@dataclass(frozen=True)
class Problem:
    """An entry that could not be read as wanted: becomes a failed ``Source``."""

    path: str  # absolute, printable
    code: str
    reason: str


@dataclass
class LayerScan:
    key: str  # where the layer is in the archive (member path or blob)
    workdirs: tuple[str, ...]  # the scope it was collected for
    compression: str | None = None
    entries: int = 0
    failure: ReadFailure | None = None
    tree: dict[str, Rec] = field(default_factory=dict)  # entries at/below the workdirs
    whiteouts: set[str] = field(default_factory=set)
    opaque: set[str] = field(default_factory=set)
    contents: dict[str, tuple[bytes, bool]] = field(default_factory=dict)  # data, truncated
    dists: dict[str, Metadata] = field(default_factory=dict)  # keyed by METADATA path
    sockets: set[str] = field(default_factory=set)
    ancestors: dict[str, str] = field(default_factory=dict)  # workdir and its parents: kind
    problems: list[Problem] = field(default_factory=list)
    plan: AgentPlan | None = None  # the agent's files outside the working directory
    agent_entries: dict[str, Rec] = field(default_factory=dict)  # the plan's and CLIs' entries
    speculative_dropped: int = 0  # wrapper-target candidates over the cap (not kept)
    # Every symlink (name -> target) and folder (explicit or implied by an entry below it)
    # of the layer: paths are resolved against them as the kernel would (:mod:`.paths`).
    links: dict[str, str] = field(default_factory=dict)
    dirs: set[str] = field(default_factory=set)
    raw_digest: str | None = None  # of the bytes as stored (blob digest)
    data_digest: str | None = None  # of the uncompressed tar (diff_id)
    raw_future: Future[str] | None = None  # the stored bytes' digest, still running
    data_hasher: Hasher | None = None  # the decompressed tar's digest, fed by the walk

    def finish_hashing(self) -> None:
        """Wait for this layer's digests (a failed layer's are abandoned)."""
        if self.raw_future is not None:
            if self.failure is not None:
                self.raw_future.cancel()
            else:
                try:
                    self.raw_digest = digest_result(self.raw_future)
                except ReadFailure as exc:
                    self.failure = exc
        if self.data_hasher is not None:
            if self.failure is not None:
                self.data_hasher.cancel()
            else:
                self.data_digest = self.data_hasher.hexdigest()
        self.raw_future = self.data_hasher = None


def record_link_names(
    scan: LayerScan, name: str, kind: str, link: str | None, budgets: Budgets
) -> None:
    """Note a symlink or a folder (and the folders an entry implies) for path resolution."""
    if budgets.link_names_left <= 0:
        budgets.links_truncated = True
        return
    if kind == "symlink" and link:
        if name not in scan.links:
            budgets.link_names_left -= 1
        scan.links[name] = link
    elif kind == "dir" and name and name not in scan.dirs:
        scan.dirs.add(name)
        budgets.link_names_left -= 1
    parent = name.rpartition("/")[0]
    while parent and parent not in scan.dirs:  # a tar may leave out its folders' entries
        scan.dirs.add(parent)
        budgets.link_names_left -= 1
        parent = parent.rpartition("/")[0]


def collect_content(
    scan: LayerScan, walker: BodyReader, e: EntryFields, name: str, budgets: Budgets
) -> None:
    path = "/" + display(name)
    if e.kind == "hardlink":
        target = normalise(e.link or "")[0]
        if target is not None and target in scan.contents:
            scan.contents[name] = scan.contents[target]
        else:
            scan.problems.append(
                Problem(
                    path, "link-content-unavailable", f"a hard link to {e.link!r} not collected"
                )
            )
        return
    if e.kind != "file":
        scan.contents.pop(name, None)
        return
    cap = budgets.limits.max_file_bytes
    want = min(e.size, cap)
    if want > budgets.content_left:
        scan.problems.append(
            Problem(
                path,
                "cap-content-bytes",
                f"not read: collected files passed {budgets.limits.max_content_bytes} bytes "
                "(max_content_bytes cap)",
            )
        )
        return
    data = walker.read_body(want)
    budgets.content_left -= len(data)
    cut = e.size > cap
    scan.contents[name] = (data, cut)
    if cut:
        scan.problems.append(
            Problem(
                path,
                "cap-file-bytes",
                f"only the first {cap} of {e.size} bytes read (max_file_bytes cap)",
            )
        )
