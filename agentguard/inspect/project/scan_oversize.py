"""A candidate file over the size cap: skipped when it cannot configure an agent, else a
failed source (searched for agent names in bounded chunks first)."""

from __future__ import annotations

from agentguard.findings import Source
from agentguard.inspect.project.files import failed_source, python_may_matter
from agentguard.inspect.project.python_source import declared_encoding
from agentguard.inspect.project.walk import MAX_FILE_BYTES
from agentguard.safeio import open_regular


def too_large(path: str, size: int) -> Source:
    return Source.skipped(
        "file", path, f"{size} bytes, over the {MAX_FILE_BYTES} byte cap: not read"
    )


NEEDLE_SCAN_BYTES = 64 * 1024 * 1024  # how far an oversize file is searched for agent names


def oversize(rel: str, abspath: str, kind: str, size: int) -> Source:
    """A candidate over the cap is skipped only when it cannot configure an agent: a
    settings/MCP/container file always can, code and scripts when they name an agent SDK
    (searched in bounded chunks). Otherwise it is a failed source: not a clean result."""
    if kind in ("python", "ts", "script") and not _may_matter(abspath, kind):
        return too_large(rel, size)
    return failed_source(
        rel,
        f"{size} bytes, over the {MAX_FILE_BYTES} byte cap, and it may configure an agent: "
        "not analysed",
        "cap-file-bytes",
    )


def _may_matter(abspath: str, kind: str) -> bool:
    """Whether an oversize file names an agent SDK (True when that cannot be told)."""
    overlap = 4096  # an import split across two chunks is still seen
    try:
        with open_regular(abspath, listed=True) as fh:
            tail = b""
            done = 0
            while chunk := fh.read(1 << 20):
                if kind == "python" and not done and declared_encoding(chunk) is not None:
                    return True  # (its bytes are not the text Python reads: not searched)
                window = tail + chunk
                # (the TypeScript SDK's package name and `claude` command lines both say so)
                if python_may_matter(window) if kind == "python" else b"claude" in window:
                    return True
                tail = window[-overlap:]
                done += len(chunk)
                if done > NEEDLE_SCAN_BYTES:
                    return True
    except OSError:
        return True
    return False
