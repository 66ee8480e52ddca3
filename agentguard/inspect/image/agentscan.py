"""The agent's files outside the working directory, collected as a layer is walked.

Called by :func:`~agentguard.inspect.image.layerscan.scan_layer` for names the agent plan
or :func:`~agentguard.inspect.image.agentplan.always_kind` wants: the entry is recorded
(kind, link) and the body read once, within the image's caps. A compiled program the config
starts is told by its head and not kept.
"""

from __future__ import annotations

from agentguard.inspect.image.agentplan import CONTENT, ENTRY
from agentguard.inspect.image.layerstate import (
    BodyReader,
    Budgets,
    EntryFields,
    LayerScan,
    Problem,
    collect_content,
)
from agentguard.inspect.image.tarwalk import display, normalise

_ELF = b"\x7fELF"


class Kept:
    """A body already read (and logged), read again by the collectors."""

    __slots__ = ("_data",)

    def __init__(self, data: bytes) -> None:
        self._data = data

    def read_body(self, limit: int) -> bytes:
        return self._data[:limit]


def collect_agent_file(
    scan: LayerScan,
    walker: BodyReader,
    e: EntryFields,
    name: str,
    budgets: Budgets,
    always: str | None,
    want: str | None,
    *,
    read: bool,
) -> None:
    """An agent file outside the working directory: its entry, and its body when wanted.

    ``read``: the working-directory pass already took the body (a body is read once)."""
    link = e.link
    if e.kind == "hardlink" and link is not None and normalise(link)[0] is not None:
        link = "/" + (normalise(link)[0] or "")
    if always in (ENTRY, CONTENT) or want == "exact":
        scan.agent_entries[name] = (e.kind, e.size, e.mode, display(link) if link else None, True)
    if read or (always != CONTENT and want is None):
        return
    if e.kind != "file" and e.kind != "hardlink":
        scan.contents.pop(name, None)
        return
    if want == "speculative" and always is None:
        # Kept on spec only while half the content budget is left for what is promised.
        spare = budgets.content_left - budgets.limits.max_content_bytes // 2
        if budgets.speculative_left <= 0 or min(e.size, budgets.limits.max_file_bytes) > spare:
            scan.speculative_dropped += 1
            return
        budgets.speculative_left -= 1
    elif want == "code" and always is None:
        if budgets.agent_code_left <= 0:
            scan.problems.append(
                Problem(
                    "/" + display(name),
                    "cap-code-files",
                    f"not read: more than {budgets.limits.max_code_files} files in the "
                    "agent's source tree or package (max_code_files cap)",
                )
            )
            return
        budgets.agent_code_left -= 1
    elif (
        want == "exact"
        and e.kind == "file"
        and (getattr(walker, "head", None) or b"").startswith(_ELF)
    ):
        scan.contents[name] = (_ELF, True)  # a compiled program, told by its logged head
        budgets.content_left -= len(_ELF)
        return
    elif want == "exact" and e.kind == "file" and e.size > budgets.limits.max_file_bytes:
        # Maybe a compiled program: its head says so, and it is not kept.
        head = walker.read_body(min(e.size, budgets.limits.max_file_bytes))
        if head.startswith(_ELF):
            scan.contents[name] = (head[:4], True)
            budgets.content_left -= 4
            return
        scan.contents.pop(name, None)
        scan.problems.append(
            Problem(
                "/" + display(name),
                "cap-file-bytes",
                f"the program the image starts is {e.size} bytes, over the "
                f"{budgets.limits.max_file_bytes} byte max_file_bytes cap: not read",
            )
        )
        return
    collect_content(scan, walker, e, name, budgets)
