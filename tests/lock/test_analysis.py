"""What the analysis does when the index and the pins disagree: a failed source, never silence."""

from __future__ import annotations

from pathlib import Path

from agentguard.findings import Source
from agentguard.lock.analysis import analyse
from agentguard.lock.graph import LockedPackage
from agentguard.lock.index import IndexClient
from tests.wheelhouse import build_wheel


def test_a_pin_whose_hash_the_index_does_not_list_is_a_failed_source(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    build_wheel(wheels, "mcp", "2.1.0")
    pins = [
        LockedPackage("mcp", "2.1.0", None, ("sha256:" + "0" * 64,)),
        LockedPackage("mcp-types", "", None, ()),
    ]
    build_wheel(wheels, "mcp-types", "2.1.0")
    client = IndexClient([], [str(wheels)], cache_dir=tmp_path / "cache")

    result = analyse(pins, ["mcp"], client)

    failed = [s for s in result.sources if s.status.value == "failed"]
    assert failed == [
        Source.failed(
            "index",
            "mcp==2.1.0",
            "the index lists no file with the locked hashes",
            error_code="hash-not-on-index",
            retryable=False,
            remedy="Re-lock against the index the lock was made from (or check that index).",
        ),
        Source.failed(
            "index",
            "mcp-types==",
            "the resolver pinned no valid version ('')",
            error_code="pin-invalid",
            retryable=False,
            remedy="Re-lock against the index the lock was made from (or check that index).",
        ),
    ]
    assert result.files == {}
