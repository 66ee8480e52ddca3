"""The `package-lock.json` npm writes, read as hostile data (every name, version, URL and
edge in it is the registry's): over its cap, nested too deep, too many packages, a path
that climbs out, a value of the wrong type or form, and what is kept of a good one."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentguard.facts.npm_tree import (
    ELSEWHERE,
    GIT,
    LOCAL,
    NO_SOURCE,
    TreePackage,
    dependency_path,
    outside,
    problems,
)
from agentguard.lock.servers.npm_tree import (
    MAX_PACKAGE_LOCK_BYTES,
    TreeError,
    read_package_lock,
)
from agentguard.lock.servers.npm_tree_shape import MAX_TREE_PACKAGES

INTEGRITY = "sha512-" + "A" * 86 + "=="
REG = "https://registry.example/"


def lock_of(packages: dict[str, Any], version: int = 3) -> bytes:
    doc = {
        "name": "agentguard-npm-tree",
        "lockfileVersion": version,
        "requires": True,
        "packages": {"": {"name": "agentguard-npm-tree", "dependencies": {"srv": "1.0.0"}}}
        | packages,
    }
    return json.dumps(doc).encode()


def good(package: str, version: str = "1.0.0", **more: Any) -> dict[str, Any]:
    base = package.rsplit("/", 1)[-1]
    return {
        "version": version,
        "resolved": f"{REG}{package}/-/{base}-{version}.tgz",
        "integrity": INTEGRITY,
        **more,
    }


def test_a_good_lock_keeps_what_npm_ci_needs_and_drops_the_rest() -> None:
    raw = lock_of(
        {
            "node_modules/srv": good(
                "srv",
                dependencies={"a": "^1", "wrap-cjs": "npm:wrap@^7"},
                bin={"srv": "bin/srv.js"},
                license="MIT",
                engines={"node": ">=18"},
                funding={"url": "https://x"},
            ),
            "node_modules/a": good("a", optional=True, os=["linux"], cpu=["x64"], dev=False),
            "node_modules/wrap-cjs": good("wrap", "7.0.0", name="wrap"),
            "node_modules/srv/node_modules/a": good("a", "2.0.0", hasInstallScript=True),
        }
    )
    tree = read_package_lock(raw, "srv")
    assert [p.path for p in tree.packages] == [
        "node_modules/a",
        "node_modules/srv",
        "node_modules/srv/node_modules/a",
        "node_modules/wrap-cjs",
    ]
    assert tree.packages[0].as_json() == {
        "path": "node_modules/a",
        "version": "1.0.0",
        "resolved": f"{REG}a/-/a-1.0.0.tgz",
        "integrity": INTEGRITY,
        "optional": True,
        "os": ["linux"],
        "cpu": ["x64"],
    }
    srv = tree.packages[1].as_json()
    assert set(srv) == {"path", "version", "resolved", "integrity", "dependencies", "bin"}
    assert tree.packages[3].name == "wrap"  # an alias: the package is another name
    assert problems(tree, "srv", "1.0.0", INTEGRITY) == []
    assert dependency_path(tree, "srv", "node_modules/srv/node_modules/a") == (
        "srv@1.0.0",
        "a@2.0.0",
    )
    assert dependency_path(tree, "srv", "node_modules/wrap-cjs") == ("srv@1.0.0", "wrap@7.0.0")


def test_a_login_in_a_resolved_url_is_never_kept() -> None:
    raw = lock_of(
        {
            "node_modules/srv": good("srv"),
            "node_modules/x": {
                "version": "1.0.0",
                "resolved": "git+https://user:ghp_secret@git.example/x.git#abc",
            },
        }
    )
    tree = read_package_lock(raw, "srv")
    assert tree.packages[1].resolved == "git+https://git.example/x.git#abc"


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        (b"x" * (MAX_PACKAGE_LOCK_BYTES + 1), "is over"),
        (b"[" * 100 + b"]" * 100, "nested deeper than 32"),
        (b'{"lockfileVersion": 3, "packages": {"": {}}, "x": "\\ud800"}', "not UTF-8"),
        (lock_of({}, version=1), "not a package-lock of version 2 or 3"),
        (json.dumps({"lockfileVersion": 3, "packages": []}).encode(), "packages: not a table"),
        (lock_of({"node_modules/../../etc": good("x")}), "the path: not a value"),
        (lock_of({"/etc/passwd": good("x")}), "the path: not a value"),
        (lock_of({"node_modules/a\\..\\b": good("x")}), "the path: not a value"),
        (lock_of({"node_modules/a/../b": good("x")}), "the path: not a value"),
        (lock_of({"node_modules/.bin": good("x")}), "the path: not a value"),
        (
            lock_of({"/".join(["node_modules/a"] * 33): good("a")}),
            "nested deeper than 32",
        ),
        (lock_of({"node_modules/a": {**good("a"), "version": ["1"]}}), ".version: not a value"),
        (lock_of({"node_modules/a": {**good("a"), "version": "1\n2"}}), ".version: not a value"),
        (
            lock_of({"node_modules/a": {**good("a"), "resolved": "https://x/\x1b[2J"}}),
            ".resolved: not a value",
        ),
        (lock_of({"node_modules/a": {**good("a"), "integrity": "md5-xx"}}), ".integrity"),
        (
            lock_of({"node_modules/a": good("a", dependencies={"../x": "1"})}),
            "dependencies (a name)",
        ),
        (lock_of({"node_modules/a": good("a", dependencies=["b"])}), "not a table of at most"),
        (lock_of({"node_modules/a": good("a", bin={"a": "/bin/sh"})}), "points out"),
        (lock_of({"node_modules/a": good("a", bin={"a": "x/../../y"})}), "points out"),
        (lock_of({"node_modules/a": good("a", bin={"../a": "x"})}), "a command"),
        (lock_of({"node_modules/a": good("a", optional="yes")}), "not true or false"),
        (lock_of({"node_modules/a": good("a", os="linux")}), "not a list"),
        (lock_of({"node_modules/a": good("a", name="../x")}), ".name: not a value"),
    ],
)
def test_a_hostile_lock_is_refused(raw: bytes, said: str) -> None:
    with pytest.raises(TreeError) as got:
        read_package_lock(raw, "srv")
    assert got.value.code == "npm-tree-unreadable"
    assert said in str(got.value)


def test_too_many_packages_are_refused() -> None:
    many = {f"node_modules/p{i}": good(f"p{i}") for i in range(MAX_TREE_PACKAGES + 1)}
    with pytest.raises(TreeError, match=f"more than {MAX_TREE_PACKAGES} packages"):
        read_package_lock(lock_of(many), "srv")


def test_a_tree_that_is_not_npm_s_answer_for_the_pin_is_inconsistent() -> None:
    tree = read_package_lock(
        lock_of({"node_modules/srv": good("srv", "1.0.1"), "node_modules/a/node_modules/b": good("b")}),
        "srv",
    )  # fmt: skip
    assert problems(tree, "srv", "1.0.0", INTEGRITY) == [
        "the tree holds srv 1.0.1, the entry 1.0.0",
        "node_modules/a/node_modules/b is nested in node_modules/a, which the tree does not hold",
    ]
    other = "sha512-" + "B" * 86 + "=="
    assert (
        problems(tree, "srv", "1.0.1", other)[0] == "the tree's integrity of srv is not the entry's"
    )


@pytest.mark.parametrize(
    ("resolved", "link", "want"),
    [
        (f"{REG}a/-/a-1.0.0.tgz", False, None),
        ("https://registry.example:443/a/-/a-1.0.0.tgz", False, None),
        ("http://registry.example/a/-/a-1.0.0.tgz", False, ELSEWHERE),  # another scheme
        ("https://registry.example.evil/a/-/a-1.0.0.tgz", False, ELSEWHERE),
        ("https://cdn.example/a/-/a-1.0.0.tgz", False, None),  # a host the user named
        ("git+https://github.com/a/a.git#abc", False, GIT),
        ("github:a/a#abc", False, GIT),
        ("file:../a", False, LOCAL),
        ("../a", True, LOCAL),
        (None, False, NO_SOURCE),
        ("ftp://registry.example/a.tgz", False, ELSEWHERE),
        # a mirror whose packuments keep the public registry's tarball URLs: npm fetches
        # those from the configured registry (replace-registry-host)
        ("https://registry.npmjs.org/a/-/a-1.0.0.tgz", False, None),
        ("http://registry.npmjs.org/a/-/a-1.0.0.tgz", False, ELSEWHERE),
        ("https://registry.npmjs.org.evil.example/a/-/a-1.0.0.tgz", False, ELSEWHERE),
    ],
)
def test_where_a_package_comes_from(resolved: str | None, link: bool, want: str | None) -> None:
    meta = (("link", "true"),) if link else ()
    p = TreePackage("node_modules/a", "1.0.0", resolved, INTEGRITY, meta)
    assert outside(p, REG, frozenset({"cdn.example"})) == want


def test_a_registry_under_a_path_owns_only_its_path() -> None:
    reg = "https://npm.example/registry/"
    mine = TreePackage("node_modules/a", "1", "https://npm.example/registry/a/-/a-1.tgz", None)
    theirs = TreePackage("node_modules/a", "1", "https://npm.example/other/a/-/a-1.tgz", None)
    assert (outside(mine, reg), outside(theirs, reg)) == (None, ELSEWHERE)


def test_entry_lines_skip_strings_whole() -> None:
    """The lines of the `servers` entries, found past strings that hold brackets, escaped
    quotes and backslashes, and a key `servers` that is not the root's."""
    from agentguard.lock.servers.tools_lock import entry_lines

    text = (
        '{\n "x": "[{\\"servers\\": [",\n "y": {"servers": [{}]},\n "servers": [\n'
        '  {"a": "\\\\", "b": "]}"},\n\n  {"tree": {"packages": [{"p": "{["}]}}\n ]\n}\n'
    )
    assert json.loads(text)["servers"][1]["tree"]["packages"] == [{"p": "{["}]
    assert entry_lines(text) == [5, 7]


def _tree(*packages: TreePackage) -> Any:
    from agentguard.facts.npm_tree import make_tree

    return make_tree(packages)


def _pkg(path: str, resolved: str | None = None, **meta: Any) -> TreePackage:
    name = path.rsplit("node_modules/", 1)[-1]
    base = name.rsplit("/", 1)[-1]
    url = resolved or f"{REG}{name}/-/{base}-1.0.0.tgz"
    kept = tuple((k, json.dumps(v, sort_keys=True)) for k, v in sorted(meta.items()))
    return TreePackage(path, "1.0.0", url, INTEGRITY, kept)


@pytest.mark.parametrize(
    ("spec", "want"),
    [
        ("^1.0.0", None),
        (">=1.2 <2 || 3.x", None),
        ("latest", None),
        ("", None),
        ("npm:@a/b@^1", None),
        ("git+https://git.example/a.git#v1", GIT),
        ("git://git.example/a.git", GIT),
        ("github:a/b", GIT),
        ("a/b#semver:^1", GIT),
        ("gitlab:a/b", GIT),
        ("https://cdn.example/a-1.0.0.tgz", ELSEWHERE),
        ("workspace:*", ELSEWHERE),
        ("NPM:evil@1", ELSEWHERE),
        ("file:../a", LOCAL),
        ("link:../a", LOCAL),
        ("../a", LOCAL),
        ("~/a", LOCAL),
        ("/abs/a", LOCAL),
        ("C:\\a", LOCAL),
    ],
)
def test_what_a_dependency_spec_names_as_its_source(spec: str, want: str | None) -> None:
    from agentguard.facts.npm_tree import spec_source

    assert spec_source(spec) == want


GIT_HELPER = "git+ssh://git@github.com/acme/helper.git#0123456789abcdef0123456789abcdef01234567"


@pytest.mark.parametrize(
    ("server_deps", "helper", "want"),
    [
        # what npm writes: each edge finds a package that satisfies it
        ({"helper": "^1"}, _pkg("node_modules/helper"), None),
        ({"helper": "github:acme/helper"}, _pkg("node_modules/helper", GIT_HELPER), None),
        (
            {"helper": "git+https://github.com/acme/helper.git"},
            _pkg("node_modules/helper", GIT_HELPER),
            None,
        ),
        ({"h": "npm:helper@^1"}, _pkg("node_modules/h", name="helper"), None),
        # the edge names another source than the package it finds holds: npm ci fetches it
        (
            {"helper": "git+https://git.example/evil.git"},
            _pkg("node_modules/helper"),
            "node_modules/srv depends on helper as `git+https://git.example/evil.git`, which "
            "node_modules/helper is not: npm ci would resolve it again from "
            "`git+https://git.example/evil.git`",
        ),
        (
            {"helper": "github:evil/helper"},
            _pkg("node_modules/helper", GIT_HELPER),
            "node_modules/srv depends on helper as `github:evil/helper`, which "
            "node_modules/helper is not: npm ci would resolve it again from `github:evil/helper`",
        ),
        (
            {"helper": "https://cdn.example/helper-1.0.0.tgz"},
            _pkg("node_modules/helper"),
            "node_modules/srv depends on helper as `https://cdn.example/helper-1.0.0.tgz`, "
            "which node_modules/helper is not: npm ci would resolve it again from "
            "`https://cdn.example/helper-1.0.0.tgz`",
        ),
        (
            {"helper": "npm:evil@1.0.0"},
            _pkg("node_modules/helper"),
            "node_modules/srv depends on helper as `npm:evil@1.0.0`, which node_modules/helper "
            "is not: npm ci would resolve it again from the registry",
        ),
        # a registry edge whose package the tree lacks: npm ci refuses the install (and npm
        # writes no entry for a dependency the server's tarball bundles)
        ({"helper": "^1", "bundled": "^2"}, _pkg("node_modules/helper"), None),
    ],
)
def test_an_edge_its_package_does_not_satisfy_is_inconsistent(
    server_deps: dict[str, str], helper: TreePackage, want: str | None
) -> None:
    tree = _tree(_pkg("node_modules/srv", dependencies=server_deps), helper)
    assert problems(tree, "srv", "1.0.0", INTEGRITY) == ([want] if want else [])


def test_an_edge_left_out_is_consistent_unless_it_names_a_source() -> None:
    srv = _pkg(
        "node_modules/srv",
        optionalDependencies={"fsevents": "^2"},
        peerDependencies={"react": "^18"},
        peerDependenciesMeta={"react": {"optional": True}},
    )
    assert problems(_tree(srv), "srv", "1.0.0", INTEGRITY) == []
    srv = _pkg("node_modules/srv", optionalDependencies={"x": "git+https://git.example/x.git"})
    assert problems(_tree(srv), "srv", "1.0.0", INTEGRITY) == [
        "node_modules/srv depends on x as `git+https://git.example/x.git`, which the tree "
        "does not hold: npm ci would resolve it again from `git+https://git.example/x.git`"
    ]


def test_a_nested_edge_finds_its_package_as_node_does() -> None:
    tree = _tree(
        _pkg("node_modules/srv", dependencies={"a": "^1", "b": "^1"}),
        _pkg("node_modules/a", dependencies={"b": "git+https://git.example/b.git"}),
        _pkg("node_modules/a/node_modules/b", "git+https://git.example/b.git#abc"),
        _pkg("node_modules/b"),
    )
    assert problems(tree, "srv", "1.0.0", INTEGRITY) == []


def test_a_package_marked_dev_is_inconsistent() -> None:
    """The tree's root has no devDependencies, so npm marks no package `dev`; one marked so
    (an edit) is what `npm ci --omit=dev` leaves out of the server's install."""
    tree = _tree(
        _pkg("node_modules/srv", dependencies={"helper": "^1"}),
        _pkg("node_modules/helper", dev=True),
    )
    assert problems(tree, "srv", "1.0.0", INTEGRITY) == [
        "node_modules/helper is marked `dev`: `npm ci --omit=dev` would leave it out, and the "
        "tree's root has no devDependencies"
    ]
