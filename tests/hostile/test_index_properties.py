"""Property-based: whatever a package index answers, the index client returns pages or
raises its own error (a failed source upstream), never anything else.

Pages are generated as JSON (PEP 691) documents of arbitrary shape and as HTML with
hostile anchors (odd file names, versions, hashes, attributes), then read the way `lock`
reads them: the version lists, the released majors, the files of one version.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import event, given
from hypothesis import strategies as st
from packaging.version import Version

from agentguard.lock import index as ix
from tests.hostile.profiles import hostile

pytestmark = pytest.mark.fuzz

URL = "https://index.invalid/simple/mcp/"
FILENAMES = st.one_of(
    st.sampled_from(
        [
            "mcp-1.0.0-py3-none-any.whl",
            "mcp-2.0.0.tar.gz",
            "mcp-1.0.0rc1-py3-none-any.whl",
            "mcp-not.a.version-py3-none-any.whl",
            "mcp-1.0.0.zip",
            "mcp-1.0.0-1-py3-none-any.whl",
            "mcp.whl",
            "-.tar.gz",
            "mcp-99999999999999999999.0-py3-none-any.whl",
            "../../evil-1.0-py3-none-any.whl",
            "mcp-1.0.0-py3-none-any.whl.metadata",
        ]
    ),
    st.text(max_size=40),
)
ANY_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=15,
)


@st.composite
def json_files(draw: st.DrawFn) -> Any:
    if draw(st.integers(0, 5)) == 0:
        return draw(ANY_JSON)
    item: dict[str, Any] = {"filename": draw(FILENAMES)}
    for key, value in (
        ("url", st.one_of(FILENAMES, st.just("https://x.invalid/f.whl"), ANY_JSON)),
        ("hashes", st.one_of(st.just({"sha256": "ab" * 32}), ANY_JSON)),
        ("size", st.one_of(st.integers(-1, 1 << 70), ANY_JSON)),
        ("upload-time", st.one_of(st.just("2024-01-01T00:00:00Z"), ANY_JSON)),
        ("requires-python", st.one_of(st.just(">=3.10"), st.just(">=3.x"), ANY_JSON)),
        ("yanked", st.one_of(st.booleans(), st.text(max_size=5), ANY_JSON)),
        ("core-metadata", st.one_of(st.booleans(), st.just({"sha256": "00"}), ANY_JSON)),
    ):
        if draw(st.booleans()):
            item[key] = draw(value)
    return item


def read_all(page: ix.ProjectPage) -> None:
    """Everything `lock` asks of a page."""
    versions = page.versions()
    released = page.released_versions()
    assert all(isinstance(v, Version) for v in versions)
    assert set(released) <= set(versions)
    for v in versions[:5]:
        for f in page.files_for(v):
            assert isinstance(f, ix.IndexFile) and f.version == v
    assert len(page.files) <= len(page)


@hostile("index-pages")
@given(
    files=st.one_of(st.lists(json_files(), max_size=8), ANY_JSON),
    extra=st.dictionaries(st.text(max_size=8), ANY_JSON, max_size=3),
)
def test_any_json_page(files: Any, extra: dict[str, Any]) -> None:
    data = {**extra, "files": files}
    try:
        page = ix.parse_json_page("mcp", URL, data)
    except ix.IndexError_ as exc:
        event(f"json: {exc.code}")
        assert exc.code == "index-garbage"
        return
    event("json: page")
    read_all(page)


@hostile("index-pages")
@given(
    anchors=st.lists(
        st.tuples(
            FILENAMES,
            st.sampled_from(["", "#sha256=" + "ab" * 32, "#sha256=zz", "#md5=00", "#"]),
            st.dictionaries(
                st.sampled_from(
                    [
                        "data-requires-python",
                        "data-yanked",
                        "data-core-metadata",
                        "data-dist-info-metadata",
                        "x",
                    ]
                ),
                st.text(max_size=10),
                max_size=3,
            ),
        ),
        max_size=8,
    ),
    noise=st.text(max_size=200),
)
def test_any_html_page(anchors: list[tuple[str, str, dict[str, str]]], noise: str) -> None:
    import html

    links = "".join(
        f'<a href="{html.escape(name)}{frag}" '
        + " ".join(f'{k}="{html.escape(v)}"' for k, v in attrs.items())
        + f">{html.escape(name)}</a>{noise[:20]}"
        for name, frag, attrs in anchors
    )
    page = ix.parse_html_page("mcp", URL, f"<html><body>{noise}{links}</body></html>")
    event(f"html: {len(page)} files")
    read_all(page)


def test_a_json_page_nested_without_end_is_garbage_not_a_crash(tmp_path: Path) -> None:
    """(Found by this suite: `json.loads` raises RecursionError there, not ValueError, and
    it escaped the index client's error handling.)"""
    from tests.hostile.index_server import serving

    (tmp_path / "w").mkdir()
    with serving(tmp_path / "w", lambda _r: "deep") as index:
        client = ix.IndexClient([index.url], cache_dir=tmp_path / "cache")
        with pytest.raises(ix.IndexError_) as caught:
            client.project_page("mcp")
    assert (caught.value.code, caught.value.retryable, str(caught.value)) == (
        "index-garbage",
        True,
        f"{index.url}/mcp/: answer is not JSON",
    )
