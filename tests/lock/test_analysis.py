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


def test_later_releases_published_as_sdists_are_read_from_their_pkg_info(tmp_path: Path) -> None:
    # claude-agent-sdk's later releases ship wheels without PEP 658 metadata files (66 MB
    # each); their sdists carry static metadata: PKG-INFO is read, nothing is built.
    from agentguard.lock.graph import UpstreamBound
    from tests.wheelhouse import build_static_sdist

    wheels = tmp_path / "wheels"
    build_wheel(wheels, "mcp", "1.5.0")
    build_wheel(wheels, "mcp", "2.1.0")
    build_wheel(wheels, "sdk", "0.2.95", ["mcp>=1.0"])
    build_static_sdist(wheels, "sdk", "0.2.100", ["mcp<2,>=1.0"])
    build_static_sdist(wheels, "sdk", "0.2.101", ["mcp<2,>=1.0"], metadata_version="2.1")
    from tests.wheelhouse import write_simple_index

    client = IndexClient(
        [write_simple_index(wheels, tmp_path / "simple")], cache_dir=tmp_path / "c"
    )
    files = {p.name: p for p in wheels.iterdir()}

    def pin(name: str, version: str) -> LockedPackage:
        import hashlib

        whl = files[f"{name}-{version}-py3-none-any.whl"]
        return LockedPackage(
            name, version, None, ("sha256:" + hashlib.sha256(whl.read_bytes()).hexdigest(),)
        )

    result = analyse([pin("sdk", "0.2.95"), pin("mcp", "2.1.0")], ["sdk==0.2.95"], client)
    # 0.2.101's PKG-INFO (Metadata-Version 2.1) does not promise static metadata: not cited.
    assert result.graph.upstream_bounds == (
        UpstreamBound("sdk", "0.2.95", "mcp", "<2", ("0.2.100",)),
    )
