"""A hostile index against `agentguard lock` (loopback only): one test per promise.

An index's values never become paths (hashes are 64 hex digits); a page naming a local
file, another port or this machine's link is refused and nothing is read from it; one
index's metadata never speaks for another's, and a `.metadata` that does not hash to what
the index says is not believed; a slow-loris index ends at `--timeout` with the source that
ran out of time named (exit 3); a package listing 100,000 requirements is refused in bounded
time and memory.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from agentguard.lock import index as ix
from tests.hostile.index_helpers import (
    SDK_WHEEL,
    failed_sources,
    lock,
    only_for_agentguard,
    project,
    report_of,
    wheels,
)
from tests.hostile.index_server import Request, serving
from tests.hostile.promises import snapshot
from tests.hostile.sdists import build_marking_sdist
from tests.lock.helpers import write_project

pytestmark = pytest.mark.usefixtures("isolated_cache")
__all__ = ["project", "wheels"]  # fixtures


# -- item 2: a hash is 64 hex digits, never a path ------------------------------------------


@pytest.mark.parametrize(
    "value",
    ["/tmp/agentguard-pwned", "../../../../pwned", "a" * 63, "a" * 64 + "/x", "g" * 64, ""],
)
def test_a_json_hash_that_is_not_64_hex_digits_is_no_hash(value: str) -> None:
    page = ix.parse_json_page(
        "mcp",
        "https://index.invalid/simple/mcp/",
        {
            "files": [
                {"filename": "mcp-1.0.0-py3-none-any.whl", "url": "x", "hashes": {"sha256": value}}
            ]
        },
    )
    [file] = page.files
    assert file.sha256 is None


def test_a_hash_that_names_a_path_writes_nothing_there(
    tmp_path: Path, wheels: Path, project: Path, isolated_cache: Path
) -> None:
    """The wheel's hash is a path (absolute, or climbing out); its sdist's hash is true, so
    the pin matches and the wheel's served metadata is read: nothing outside changes, and
    every cache file name is a hex digest agentguard made (what it cannot verify against a
    hash it does not cache at all)."""
    import zipfile

    with zipfile.ZipFile(wheels / SDK_WHEEL) as zf:
        real = zf.read("agent_sdk-1.0.0.dist-info/METADATA")
    mark = tmp_path / "built"
    build_marking_sdist(wheels, "agent-sdk", "1.0.0", mark)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.json").write_text("keep me")
    before = snapshot(outside)

    def hook(page: dict[str, Any]) -> dict[str, Any]:
        for item in page["files"]:
            if item["filename"] == SDK_WHEEL:
                item["hashes"] = {"sha256": str(outside / "victim")}
            elif item["filename"].endswith(".whl"):
                item["hashes"] = {"sha256": "../../../outside/planted"}
        return page

    with serving(wheels, page_hook=only_for_agentguard(hook), metadata={SDK_WHEEL: real}) as index:
        run = lock(project, index.url)
    report = report_of(run)
    assert snapshot(outside) == before
    assert (outside / "victim.json").read_text() == "keep me"
    assert not mark.exists()
    names = [p.name for p in isolated_cache.rglob("*") if p.is_file()]
    assert all(re.fullmatch(r"[0-9a-f]{64}\.json", n) for n in names), names
    # mcp's only file has no usable hash: nothing to verify the pin against
    assert run.code == 3
    assert [(s["name"], s["error_code"]) for s in failed_sources(report)] == [
        ("mcp==2.0.0", "hash-not-on-index")
    ]


# -- item 8: what a page names is read only when allowed, and capped ---------------------------


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("file:///dev/zero", "names a file URL"),
        ("file:///etc/passwd", "names a file URL"),
        ("http://127.0.0.1:1/files/" + SDK_WHEEL, "another host over http (127.0.0.1:1)"),
        ("http://169.254.169.254/latest/" + SDK_WHEEL, "another host over http"),
        ("https://localhost/files/" + SDK_WHEEL, "a host on this machine or its link (localhost)"),
    ],
)
def test_a_page_naming_a_local_or_other_host_url_is_refused(
    wheels: Path, project: Path, url: str, why: str
) -> None:
    def hook(page: dict[str, Any]) -> dict[str, Any]:
        for item in page["files"]:
            if item["filename"] == SDK_WHEEL:
                item["url"] = url
        return page

    with serving(wheels, page_hook=only_for_agentguard(hook)) as index:
        run = lock(project, index.url)
    report = report_of(run)
    assert run.code == 3
    [source] = failed_sources(report)
    assert (source["kind"], source["name"], source["error_code"]) == (
        "metadata",
        "agent-sdk==1.0.0",
        "index-bad-url",
    )
    assert why in source["reason"], source["reason"]
    assert run.seconds < 60 and run.max_rss_mib < 400, (run.seconds, run.max_rss_mib)
    assert not (project / "pylock.toml").exists()


@pytest.mark.parametrize(
    ("target", "why"),
    [
        ("file:///etc/passwd", "names a file URL (only http and https are read)"),
        ("http://127.0.0.1:1/x", "names another host over http (127.0.0.1:1)"),
        ("https://localhost/x", "names a host on this machine or its link (localhost)"),
    ],
)
def test_a_redirect_off_the_index_is_refused(
    tmp_path: Path, wheels: Path, target: str, why: str
) -> None:
    def plan(r: Request) -> str:
        return f"redirect {target}" if r.from_agentguard else "ok"

    with serving(wheels, plan) as index:
        client = ix.IndexClient([index.url], cache_dir=tmp_path / "cache")
        with pytest.raises(ix.IndexError_) as caught:
            client.project_page("mcp")
        followed = [r.path for r, _ in index.log]
    assert (caught.value.code, str(caught.value)) == (
        "index-bad-url",
        f"{index.url}/mcp/: redirect refused: {why}",
    )
    assert followed == ["/simple/mcp/"]


# -- item 9: one index never speaks for another ------------------------------------------------

SPOOF = b"Metadata-Version: 2.1\nName: agent-sdk\nVersion: 1.0.0\n"


def no_metadata_for_uv(req: Request, page: dict[str, Any]) -> dict[str, Any]:
    if not req.from_agentguard:
        for item in page["files"]:
            item.pop("core-metadata", None)
    return page


def ag101(report: dict[str, Any]) -> list[tuple[str, str, str]]:
    """The edges AG101 names: (parent, child, specifier)."""
    return sorted(
        (f["evidence"]["parent"], f["evidence"]["child"], f["evidence"]["specifier"])
        for f in report["findings"]
        if f["rule_id"] == "AG101"
    )


EDGE = [("agent-sdk", "mcp", ">=1")]


def test_a_spoofing_index_does_not_poison_the_honest_one(
    wheels: Path, project: Path, tmp_path: Path
) -> None:
    with serving(wheels, page_hook=no_metadata_for_uv, metadata={SDK_WHEEL: SPOOF}) as spoofing:
        first = lock(project, spoofing.url)
    assert report_of(first)["complete"] is True
    assert ag101(report_of(first)) == []  # its own answer is what it says (cannot be told apart)
    other = write_project(tmp_path / "bot2", ["agent-sdk==1.0.0"])
    with serving(wheels) as honest:
        second = lock(other, honest.url)  # same cache, same wheel hashes
    assert second.code == 1
    assert ag101(report_of(second)) == EDGE


def test_a_metadata_file_that_does_not_hash_as_the_index_says_is_rejected(
    wheels: Path, project: Path
) -> None:
    import hashlib
    import zipfile

    with zipfile.ZipFile(wheels / SDK_WHEEL) as zf:
        real = zf.read("agent_sdk-1.0.0.dist-info/METADATA")
    with serving(
        wheels,
        page_hook=no_metadata_for_uv,
        metadata={SDK_WHEEL: SPOOF},
        advertised={SDK_WHEEL: hashlib.sha256(real).hexdigest()},
    ) as index:
        run = lock(project, index.url)
        wheel_read = [r for r, _ in index.log if r.from_agentguard and r.path.endswith(SDK_WHEEL)]
    assert run.code == 1
    assert ag101(report_of(run)) == EDGE  # from the hash-checked wheel
    assert len(wheel_read) == 1


# -- item 10: a slow-loris index ends at the deadline ------------------------------------------


@pytest.mark.parametrize(
    ("reader", "timeout", "late"),
    [
        # agentguard's own page reads: each page still being read is named
        (
            "agentguard",
            "8",
            [("index", "agent-sdk (project page)"), ("index", "mcp (project page)")],
        ),
        # the resolver's: uv is stopped (its per-read timeout, 30 s, never fires)
        ("uv", "5", [("resolver", "uv")]),
    ],
)
def test_a_slow_loris_index_ends_at_the_deadline(
    wheels: Path, project: Path, reader: str, timeout: str, late: list[tuple[str, str]]
) -> None:
    def plan(r: Request) -> str:
        slowed = r.from_agentguard if reader == "agentguard" else r.from_uv
        return "slow" if r.is_page and slowed else "ok"

    with serving(wheels, plan) as index:
        run = lock(project, index.url, "--timeout", timeout, env={"UV_HTTP_TIMEOUT": "30"})
    report = report_of(run)
    assert run.code == 3
    failed = failed_sources(report)
    assert all(s["error_code"] == "deadline-exceeded" for s in failed), failed
    assert all("--timeout" in s["reason"] for s in failed), failed
    assert (
        sorted(
            (s["kind"], s["name"].split(" ")[0] if s["kind"] == "resolver" else s["name"])
            for s in failed
        )
        == late
    )
    if reader == "agentguard":
        assert any("out of time: " in n and "mcp (project page)" in n for n in report["notes"])
    assert run.seconds < float(timeout) + 10, run.seconds
    assert not (project / "pylock.toml").exists()


# -- item 11: a cap on Requires-Dist entries ---------------------------------------------------


def test_a_hundred_thousand_requirements_are_refused_in_bounded_time_and_memory(
    wheels: Path, project: Path
) -> None:
    lines = "".join(f"Requires-Dist: pkg-{i}>=1\n" for i in range(100_000))
    huge = SPOOF + lines.encode()
    with serving(wheels, page_hook=no_metadata_for_uv, metadata={SDK_WHEEL: huge}) as index:
        run = lock(project, index.url)
    report = report_of(run)
    assert run.code == 3
    [source] = failed_sources(report)
    assert (source["kind"], source["name"], source["error_code"], source["reason"]) == (
        "metadata",
        "agent-sdk==1.0.0",
        "too-many-requirements",
        f"{SDK_WHEEL}: 100000 Requires-Dist entries (more than 5000, the cap)",
    )
    assert run.seconds < 30 and run.max_rss_mib < 250, (run.seconds, run.max_rss_mib)
