"""What a re-lock makes ahead, beside the resolver, is what it would make after it: the
pylock packages (and their part of the lock digest) built while the resolver runs, and
the pins read from the resolver's output without the requirement parser."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from packaging.utils import canonicalize_name

from agentguard.lock import lockfile
from agentguard.lock.backend import ResolverError
from agentguard.lock.requirements_text import (
    _parsed_pin,
    parse_requirements_lock,
    pin_marker,
)
from tests.lock.helpers import write_project


def _digest_as_written(packages: list[dict[str, Any]], tool: dict[str, Any]) -> str:
    """The lock digest as every earlier version computed it (one json.dumps)."""
    stable = {
        k: v
        for k, v in tool.items()
        if k not in ("resolved-at", "tool-version", "lock-digest", "exclude-newer")
    }
    blob = json.dumps({"packages": packages, "tool": stable}, sort_keys=True, default=str)
    return "sha256:" + hashlib.sha256(blob.encode()).hexdigest()


def test_the_digest_from_the_packages_json_is_the_digest_of_the_whole() -> None:
    when = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)
    packages: list[dict[str, Any]] = [
        {
            "version": "1.0",
            "name": "zeta",
            "marker": 'sys_platform == "win32"',
            "wheels": [{"upload-time": when, "name": "z-1.0-py3-none-any.whl", "size": 3}],
        },
        {"name": "älpha", "version": "2", "sdist": {"hashes": {"sha256": "ab"}, "url": "u"}},
    ]
    tool: dict[str, Any] = {
        "schema": 1,
        "resolved-at": "2026-01-02T03:04:05Z",
        "tool-version": "9",
        "universal": True,
        "edges": [{"parent": "", "child": "zeta", "specifier": ">=1", "majors-admitted": ["1"]}],
        "released-majors": {"zeta": ["0.9", "1"], "aa": []},
        "backend": "uv 0.1 (x)",
        "index-urls": ["index-a"],
        "exclude-newer": "2026-01-01T00:00:00Z",
        "lock-digest": "sha256:old",
        "requires-python": None,
        "weight": 1.5,
    }
    assert lockfile.lock_digest(packages, tool) == _digest_as_written(packages, tool)
    tool["universal"] = False  # (the digest still reads the tool table)
    assert lockfile.lock_digest(packages, tool) == _digest_as_written(packages, tool)


def test_a_relock_takes_the_pylock_packages_made_beside_the_resolver_and_writes_the_same(
    tmp_path: Path, agent_index: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentguard import lock_command as command
    from agentguard.engine.lock import speculation

    project = write_project(tmp_path / "bot", ["claude-agent-sdk==0.2.100"])
    opts = command.LockOptions(project=project, index_url=agent_index["url"])
    assert command.run_lock(opts)[0].complete
    made: list[str] = []
    real = lockfile.pylock_packages

    def counting(*args: Any, **kwargs: Any) -> lockfile.PylockPackages:
        import threading

        made.append(threading.current_thread().name)
        return real(*args, **kwargs)

    monkeypatch.setattr(lockfile, "pylock_packages", counting)

    def rewritten() -> tuple[bytes, list[str], str]:
        # a header line changed: the same pins, and both files written again
        lock = project / "requirements.lock"
        lines = lock.read_text().splitlines(keepends=True)
        lock.write_text("# changed by hand\n" + "".join(lines[1:]))
        made.clear()
        report, _ = command.run_lock(opts)
        assert report.status == "written", report.notes
        pylock = (project / "pylock.toml").read_text().splitlines(keepends=True)
        return (
            (project / "requirements.lock").read_bytes(),
            pylock,
            str(report.provenance.inputs["lock_digest"]),
        )

    ahead = rewritten()
    # made once, by the analysis beside the resolver (not again once it returned)
    assert len(made) == 1 and made[0] != "MainThread"
    monkeypatch.setattr(speculation, "speculate", lambda *_a, **_k: None)
    after = rewritten()
    assert made == ["MainThread"]
    resolved_at = [n for n, line in enumerate(ahead[1]) if line.startswith("resolved-at = ")]
    assert len(resolved_at) == 1
    for doc in (ahead[1], after[1]):
        del doc[resolved_at[0]]
    assert ahead == after


def test_packages_made_for_another_graph_files_or_index_are_not_taken(
    tmp_path: Path, agent_index: dict[str, Any]
) -> None:
    from agentguard import lock_command as command
    from agentguard.lock.stored import read_stored

    project = write_project(tmp_path / "bot", ["claude-agent-sdk==0.2.100"])
    assert command.run_lock(command.LockOptions(project=project, index_url=agent_index["url"]))[
        0
    ].complete
    stored = read_stored(project)
    assert stored is not None
    graph, files = stored.graph, {(p.name, p.version): [] for p in stored.graph.packages}
    right = lockfile.pylock_packages(graph, files, "index-one")
    assert right.fits(graph, files, "index-one")
    assert not right.fits(graph, files, "index-two")
    assert not right.fits(graph, dict(files), "index-one")
    import dataclasses

    assert not right.fits(dataclasses.replace(graph), files, "index-one")
    assert right.json == json.dumps(right.packages, sort_keys=True, default=str)
    assert all(p["index"] == "index-one" for p in right.packages)


MARKERS = [
    "sys_platform == 'win32'",
    "platform_python_implementation != 'PyPy'",
    "python_full_version >= '3.11.5'",
    "(platform_release >= '20.0' and platform_system == 'darwin' and sys_platform != 'darwin')"
    " or (platform_release >= '20' and platform_system == 'darwin' and sys_platform == 'darwin')",
    'python_version>"3.10"and os_name=="nt"',
    "extra == 'Foo_Bar.baz'",
    "python_version < '3.12' or (extra == 'dev' and sys_platform == 'linux')",
    "'linux' in sys_platform",
    "os.name == 'posix'",
]


@pytest.mark.parametrize("marker", MARKERS)
def test_a_pin_with_a_marker_reads_as_the_requirement_parser_reads_it(marker: str) -> None:
    spec = f"Some_Pkg==1.0.post2 ; {marker}"
    hashes = ("sha256:aa",)
    text = f"{spec} \\\n    --hash=sha256:aa\n"
    assert parse_requirements_lock(text)[0] == [_parsed_pin(spec, hashes)]
    assert pin_marker(marker) == str(_parsed_pin(spec, hashes).marker)


@pytest.mark.parametrize(
    "marker", ["", "sys_platform ==", "a ; b", "sys_platform == 'x' ; python_version > '3'"]
)
def test_a_pin_whose_marker_does_not_parse_fails_as_before(marker: str) -> None:
    spec = f"pkg==1.0 ; {marker}"
    with pytest.raises(ResolverError) as parsed:
        _parsed_pin(spec.strip(), ())  # (a line is read stripped)
    with pytest.raises(ResolverError) as read:
        parse_requirements_lock(spec + "\n")
    assert str(read.value) == str(parsed.value)
    assert read.value.code == "resolver-garbage"


def test_pins_the_quick_read_leaves_to_the_parser() -> None:
    # no space around the semicolon, extras
    text = "pkg==1.0;sys_platform=='win32'\npkg[extra]==2.0 ; python_version > '3'\n"
    pins = parse_requirements_lock(text)[0]
    assert pins == [
        _parsed_pin("pkg==1.0;sys_platform=='win32'", ()),
        _parsed_pin("pkg[extra]==2.0 ; python_version > '3'", ()),
    ]
    assert [p.marker for p in pins] == [
        'sys_platform == "win32"',
        'python_version > "3"',
    ]


def test_a_graphs_pins_by_name_and_edges_by_child_are_those_a_scan_finds() -> None:
    from agentguard.lock.graph import PROJECT, DependencyEdge, LockedPackage, LockGraph

    pins = (
        LockedPackage("b-pkg", "2.0", 'sys_platform == "win32"', ()),
        LockedPackage("a", "1.0", None, ()),
        LockedPackage("b-pkg", "1.0", 'sys_platform != "win32"', ()),
    )
    edges = (
        DependencyEdge(PROJECT, None, "a", ">=1"),
        DependencyEdge("a", "1.0", "b-pkg", "<3"),
        DependencyEdge(PROJECT, None, "b-pkg", ">=1"),
    )
    graph = LockGraph(pins, edges)
    for name in ("b-pkg", "B_Pkg", "b.pkg", "a", "missing"):
        want = [p for p in pins if p.name == canonicalize_name(name)]
        assert graph.versions_of(name) == want
        graph.versions_of(name).clear()  # (each caller gets a list of its own)
        assert graph.versions_of(name) == want
    for child in ("a", "b-pkg", "missing"):
        assert graph.edges_into(child) == [e for e in edges if e.child == child]
    assert [p.version for p in graph.versions_of("b-pkg")] == ["2.0", "1.0"]  # lock order


def test_a_page_too_small_to_be_kept_reads_as_the_walk_that_finds_places_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from packaging.version import Version

    from agentguard.lock import page_cache, page_spans
    from agentguard.lock.index import IndexClient
    from tests.hostile.index_server import serving
    from tests.wheelhouse import build_wheel

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("AGENTGUARD_CACHE_KEY", raising=False)
    wheels = tmp_path / "wheels"
    for v in ("0.9.0", "1.0.0", "1.1.0", "2.0.0"):
        build_wheel(wheels, "mcp", v)
    walks: list[int] = []
    walk = page_spans.parse

    def counting(body: bytes) -> Any:
        walks.append(len(body))
        return walk(body)

    monkeypatch.setattr(page_spans, "parse", counting)

    def facts(cache: Path) -> tuple[object, ...]:
        client = IndexClient([server.url], cache_dir=cache)
        try:
            page = client.project_page("mcp")
        finally:
            client.close()
        assert not isinstance(page, page_cache.CachedPage)
        released = page.released_versions()
        return (
            tuple(str(v) for v in released),
            [
                (f.filename, f.sha256, f.upload_time, f.size)
                for v in released
                for f in page.files_for(v)
            ],
            page.yanked_versions(),
            page.upload_times(Version("1.0.0")),
            page.raw_items,
            len(page),
        )

    with serving(wheels) as server:
        server.upload_times = {p.name: "2025-01-01T00:00:00Z" for p in wheels.glob("*.whl")}
        small = facts(tmp_path / "one")
        assert walks == []  # under the cache's floor: json.loads alone
        monkeypatch.setattr(page_cache, "MIN_BYTES", 0)
        walked = facts(tmp_path / "two")
        assert len(walks) == 1
    assert small == walked
    assert small[0] == ("0.9.0", "1.0.0", "1.1.0", "2.0.0")


def test_a_versions_major_key_kept_per_version_is_the_one_it_works_out() -> None:
    from packaging.version import Version

    from agentguard.facts.graph import major_key

    texts = ["0", "0.0", "0.1", "0.1.0", "0.1.0.0", "1", "1.0", "1.0.0", "1!0.5", "0.5"]
    texts += ["2.0rc1", "2.0.post1", "0.9.dev3", "10.1+local", "0.10", "0.10.0.1"]
    major_key.cache_clear()
    for text in texts + list(reversed(texts)):  # equal versions met in either order
        v = Version(text)
        assert major_key(v) == major_key.__wrapped__(v), text
    assert [major_key(Version(t)) for t in ("0.1", "0.1.0", "1.0", "1.0.0", "1!0.5")] == [
        "0.1",
        "0.1",
        "1",
        "1",
        "0.5",
    ]
