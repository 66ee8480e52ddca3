"""The graph facts and the major arithmetic, offline."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from packaging.requirements import Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from agentguard.lock.analysis import build_graph
from agentguard.lock.graph import (
    PROJECT,
    DependencyEdge,
    LockedPackage,
    major_groups,
    major_key,
    majors_admitted,
    unbounded_above,
)

V = [Version(v) for v in ("0.9.1", "1.0.0", "1.23.0", "1.30.0", "2.0.0", "2.3.0", "3.0.0rc1")]


def test_major_key_counts_each_minor_before_1_0() -> None:
    assert [major_key(Version(v)) for v in ("0.9.1", "0.10.0", "1.2.3", "2.0")] == [
        "0.9",
        "0.10",
        "1",
        "2",
    ]


def test_majors_admitted_ignores_prereleases_and_follows_the_specifier() -> None:
    assert majors_admitted(">=1.23.0", V) == ("1", "2")
    assert majors_admitted(">=0.1.0", V) == ("0.9", "1", "2")
    assert majors_admitted("<2.0.0,>=1.23.0", V) == ("1",)
    assert majors_admitted("", V) == ("0.9", "1", "2")


def test_unbounded_above() -> None:
    assert unbounded_above(">=1.23.0")
    assert unbounded_above("")
    assert not unbounded_above("<3,>=1.19.0")
    assert not unbounded_above("~=1.2")
    assert not unbounded_above("==1.2.*")


def _pin(name: str, version: str) -> LockedPackage:
    return LockedPackage(name, version, None, ())


def test_build_graph_follows_extras_and_keeps_the_declared_specifier() -> None:
    pins = [_pin("sdk", "1.0"), _pin("mcp", "1.5"), _pin("ws", "2.0"), _pin("cli", "1.0")]
    requires = {
        ("sdk", "1.0"): [Requirement("mcp[ws]>=1"), Requirement('cli>=1 ; extra == "cli"')],
        ("mcp", "1.5"): [Requirement('ws<3,>=1 ; extra == "ws"'), Requirement("absent>=1")],
    }
    graph = build_graph(pins, ["sdk==1.0"], requires)
    assert graph.edges == (
        DependencyEdge(PROJECT, None, "sdk", "==1.0"),
        DependencyEdge("mcp", "1.5", "ws", "<3,>=1", 'extra == "ws"'),
        DependencyEdge("sdk", "1.0", "mcp", ">=1", None, ("ws",)),
    )
    assert graph.path_to("ws") == ("project", "sdk==1.0", "mcp==1.5", "ws==2.0")


def _brute_force_majors(specifier: str, versions: list[Version]) -> tuple[str, ...]:
    spec = SpecifierSet(specifier)
    keys = {major_key(v) for v in versions if not v.is_prerelease and spec.contains(v)}
    return tuple(sorted(keys, key=lambda k: tuple(int(p) for p in k.split("."))))


_VERSIONS = st.builds(
    lambda major, minor, patch, tail: Version(f"{major}.{minor}.{patch}{tail}"),
    st.integers(0, 4),
    st.integers(0, 12),
    st.integers(0, 3),
    st.sampled_from(["", "", "", "rc1", ".post1", ".dev2", "+local", "a1"]),
)
_CLAUSES = st.builds(
    lambda op, v, star: (
        f"{op}{v.public if star and op in ('==', '!=') else v}"
        + (".*" if star and op in ("==", "!=") else "")
    ),
    st.sampled_from([">=", ">", "<", "<=", "==", "!=", "~="]),
    _VERSIONS.filter(lambda v: v.local is None and v.dev is None),
    st.booleans(),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_VERSIONS, min_size=1, max_size=40), st.lists(_CLAUSES, min_size=0, max_size=3))
def test_majors_admitted_matches_testing_every_version(
    versions: list[Version], clauses: list[str]
) -> None:
    specifier = ",".join(clauses)
    try:
        SpecifierSet(specifier)
    except InvalidSpecifier:
        return
    assert majors_admitted(specifier, versions) == _brute_force_majors(specifier, versions)
    groups = major_groups(versions)
    assert majors_admitted(specifier, versions, groups) == _brute_force_majors(specifier, versions)


def test_a_forked_parents_edges_come_in_version_order_whatever_the_set_order() -> None:
    # Found in the field: a parent pinned once per fork declares the same range in each
    # version; the edges sorted equal, so the lock digest changed from run to run.
    versions = [f"2.{n}.0" for n in range(12)]
    pins = [
        LockedPackage("pillow-lite", v, f'python_full_version == "3.{n}"', ())
        for n, v in enumerate(versions)
    ]
    pins.append(LockedPackage("x", "1.0", None, ()))
    requires = {("pillow-lite", v): [Requirement("x>=1")] for v in reversed(versions)}
    graph = build_graph(pins, ["pillow-lite"], requires)
    assert [e.parent_version for e in graph.edges if e.child == "x"] == sorted(versions)


def test_a_cap_from_one_forks_parent_keeps_that_forks_marker() -> None:
    """fast-agent-mcp is pinned once per fork (0.2.36 below Python 3.12, 0.10.48 above);
    0.2.36's `anthropic>=0.55.0` gets a cap for its own fork only: a bare cap would also
    drag the other fork's fast-agent-mcp back to an old release."""
    from agentguard.config import load_config
    from agentguard.lock.graph import DependencyEdge, LockedPackage, LockGraph
    from agentguard.rules.deps_spans import check_major_spans

    old = 'python_full_version < "3.12"'
    graph = LockGraph(
        packages=(
            LockedPackage("anthropic", "1.17.0", None),
            LockedPackage("fast-agent-mcp", "0.2.36", old),
            LockedPackage("fast-agent-mcp", "0.10.48", 'python_full_version >= "3.12"'),
        ),
        edges=(
            DependencyEdge(
                "fast-agent-mcp", "0.2.36", "anthropic", ">=0.55.0", None, (), ("0.55", "1")
            ),
        ),
    )
    [span] = check_major_spans(graph, load_config(None).deps)
    assert span.fix.snippet == ("anthropic>=1.0,<2 ; python_full_version < '3.12'")


def test_a_workspace_member_whose_version_is_dynamic_is_named_alone() -> None:
    """pydantic-ai's uv.lock records its members (`pydantic-ai-slim`, `source = { editable =
    ... }`) without a version: they are built with uv-dynamic-versioning. The finding read
    "pydantic-ai-slim== declares anthropic>=1.0.0"; it names the member alone."""
    from agentguard.config import load_config
    from agentguard.lock.graph import DependencyEdge, LockedPackage, LockGraph
    from agentguard.rules.deps_spans import check_major_spans

    graph = LockGraph(
        packages=(
            LockedPackage("anthropic", "1.0.0", None),
            LockedPackage("pydantic-ai-slim", "", None),
        ),
        edges=(
            DependencyEdge("pydantic-ai-slim", "", "anthropic", ">=1.0.0", None, (), ("1", "2")),
        ),
    )
    [span] = check_major_spans(graph, load_config(None).deps)
    assert span.message.startswith("pydantic-ai-slim declares anthropic>=1.0.0, which admits")
    assert span.locations[0].dependency_path == ("project", "pydantic-ai-slim", "anthropic")


def test_caps_whose_markers_cannot_be_told_apart_are_one_group() -> None:
    """browser-use: pyobjc-framework-cocoa (pinned for `platform_system == 'darwin' or
    sys_platform == 'darwin'`) is spanned by pyobjc-core's callers, one of them pinned once
    for `platform_system == 'darwin'`, a value no real platform has (it is `Darwin`). Its cap
    restricted to that marker selects no environment agentguard models, so nothing says it
    is disjoint from the others: one group, one cap (two were offered, and did not resolve
    together on macOS)."""
    from agentguard.lock.graph import DependencyEdge, LockedPackage, LockGraph
    from agentguard.rules.deps_fix_plan import fix_groups

    darwin = "platform_system == 'darwin' or sys_platform == 'darwin'"
    graph = LockGraph(
        packages=(
            LockedPackage("cocoa", "12.1", darwin),
            LockedPackage("quartz", "12.1", darwin),
            LockedPackage("security", "12.1", "platform_system == 'darwin'"),
        ),
        edges=(
            DependencyEdge("quartz", "12.1", "cocoa", ">=8.0", None, (), ("8", "12")),
            DependencyEdge("security", "12.1", "cocoa", ">=12.1", None, (), ("12", "13")),
        ),
    )
    assert list(fix_groups(graph)) == [("cocoa", darwin, "12.1")]
