"""An npm MCP server's own dependency tree, as one real `npm install --package-lock-only`
of the server's exact version resolved it, recorded per entry in ``mcp.lock.json``.

Frozen records and pure functions over them: the lock flow fills them, the AG147 rule and
the ``lock --check`` consistency checks read them. A package npm recorded without an
integrity is unknown (never "verified"); a package whose ``resolved`` is not the lock's
registry (a git repository, a tarball elsewhere, a local path) is named, never folded in."""

from __future__ import annotations

import hashlib
import json
import re
import urllib.parse
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

# The fields of npm's package-lock entry kept beside path, version, resolved and integrity:
# what `npm ci` needs to install exactly this tree from a lock written back out of it (the
# edges, the platform filters, the bins, the flags). Everything else npm writes (license,
# engines, funding, deprecated...) is dropped.
EDGE_FIELDS = ("dependencies", "optionalDependencies", "peerDependencies")
KIT_FIELDS = (
    "name",  # an alias: the path says `string-width-cjs`, the package is `string-width`
    *EDGE_FIELDS,
    "peerDependenciesMeta",
    "os",
    "cpu",
    "bin",
    "optional",
    "peer",
    "dev",
    "hasInstallScript",
    "link",
)

# The public npm registry's host. npm rewrites a tarball URL on it to the configured
# registry before fetching (its `replace-registry-host` setting, `npmjs` by default), and
# records it as the packument gave it: such a URL is fetched from the lock's registry.
NPMJS_HOST = "registry.npmjs.org"

# Why a package's source is not the lock's registry (:func:`outside`).
GIT, LOCAL, ELSEWHERE, NO_SOURCE = "git", "local", "elsewhere", "no-source"


@dataclass(frozen=True)
class TreePackage:
    """One package of the tree: its place (``node_modules/a/node_modules/b``), its exact
    version, where npm resolved it and the integrity npm recorded (None: none, so the
    package is unknown). ``meta``: the other kept fields (:data:`KIT_FIELDS`), each as
    canonical JSON text."""

    path: str
    version: str | None
    resolved: str | None
    integrity: str | None
    meta: tuple[tuple[str, str], ...] = ()

    @property
    def folder_name(self) -> str:
        """The name its folder says (``node_modules/@a/b`` -> ``@a/b``)."""
        return self.path.rsplit("node_modules/", 1)[-1]

    @property
    def name(self) -> str:
        """The package it is (an alias's ``name``, else its folder's)."""
        own = dict(self.meta).get("name")
        return json.loads(own) if own else self.folder_name

    def flag(self, key: str) -> bool:
        return dict(self.meta).get(key) == "true"

    def as_json(self) -> dict[str, object]:
        out: dict[str, object] = {"path": self.path, "version": self.version}
        out |= {"resolved": self.resolved, "integrity": self.integrity}
        out |= {k: json.loads(v) for k, v in self.meta}
        return out


@dataclass(frozen=True)
class NpmTree:
    """The tree of one npm server entry: every package but the root (the server itself
    is ``node_modules/<package>``), sorted by path, each path once."""

    packages: tuple[TreePackage, ...]
    digest: str  # sha256 over the packages' canonical JSON (:func:`tree_digest`)
    lockfile_version: int = 3  # the package-lock version npm wrote it as

    def root_package(self, package: str) -> TreePackage | None:
        path = f"node_modules/{package}"
        return next((p for p in self.packages if p.path == path), None)

    @property
    def unknown(self) -> tuple[TreePackage, ...]:
        """Packages recorded without an integrity: what they hold is unknown."""
        return tuple(p for p in self.packages if p.integrity is None)


def tree_digest(packages: Iterable[TreePackage]) -> str:
    doc = [p.as_json() for p in packages]
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def make_tree(packages: Sequence[TreePackage], lockfile_version: int = 3) -> NpmTree:
    ordered = tuple(sorted(packages, key=lambda p: p.path))
    return NpmTree(ordered, tree_digest(ordered), lockfile_version)


def _registry_parts(registry: str) -> tuple[str, str, str] | None:
    parts = urllib.parse.urlsplit(registry)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    try:
        port = str(parts.port or (443 if parts.scheme == "https" else 80))
    except ValueError:
        return None
    return parts.scheme, f"{parts.hostname.lower()}:{port}", parts.path.rstrip("/") + "/"


def outside(
    package: TreePackage, registry: str | None, hosts: frozenset[str] = frozenset()
) -> str | None:
    """Why ``package`` does not come from ``registry`` (:data:`GIT`, :data:`LOCAL`,
    :data:`ELSEWHERE`, :data:`NO_SOURCE`), or None when it does: its ``resolved`` is a URL
    under the registry's base (scheme, host, port and path), on a host the user named as
    the registry's file host (``hosts``: ``AGENTGUARD_INDEX_HOSTS``, https only), or a
    tarball of the public npm registry (:data:`NPMJS_HOST`), which npm fetches from the
    configured registry."""
    resolved = package.resolved
    if package.flag("link") or (resolved is not None and _local(resolved)):
        return LOCAL
    if resolved is None:
        return NO_SOURCE
    if resolved.startswith(("git+", "git:", "github:", "gitlab:", "bitbucket:", "gist:")):
        return GIT
    here = _registry_parts(resolved)
    base = _registry_parts(registry) if registry else None
    if here is None:
        return ELSEWHERE
    if base is not None and here[:2] == base[:2] and here[2].startswith(base[2]):
        return None
    host = (urllib.parse.urlsplit(resolved).hostname or "").lower()
    if here[0] == "https" and (host in hosts or here[1] == f"{NPMJS_HOST}:443"):
        return None
    return ELSEWHERE


def _local(resolved: str) -> bool:
    return resolved.startswith(("file:", "/", ".", "~")) or bool(
        re.match(r"^[A-Za-z]:[\\/]", resolved)
    )


def problems(tree: NpmTree, package: str, version: str, integrity: str | None) -> list[str]:
    """What makes ``tree`` inconsistent with its entry (``package`` at ``version`` with
    ``integrity``) or with itself: the server missing from it or another version or
    integrity, a nested package whose parent folder holds no package, a path twice, a
    digest that is not over these packages. Empty: consistent."""
    out: list[str] = []
    root = tree.root_package(package)
    if root is None:
        out.append(f"the tree does not hold {package} itself (node_modules/{package})")
    else:
        if root.version != version:
            out.append(f"the tree holds {package} {root.version}, the entry {version}")
        if integrity and root.integrity != integrity:
            out.append(f"the tree's integrity of {package} is not the entry's")
    paths = [p.path for p in tree.packages]
    if len(set(paths)) != len(paths):
        out.append("a package path stands twice in the tree")
    if paths != sorted(paths):
        out.append("the tree's packages are not sorted by path")
    held = set(paths)
    for path in paths:
        parent = path.rpartition("/node_modules/")[0]
        if parent and parent not in held:
            out.append(f"{path} is nested in {parent}, which the tree does not hold")
            break
    marked = next((p.path for p in tree.packages if p.flag("dev")), None)
    if marked is not None:
        out.append(
            f"{marked} is marked `dev`: `npm ci --omit=dev` would leave it out, and the "
            "tree's root has no devDependencies"
        )
    out += _edge_problems(tree)[:1]
    if tree_digest(tree.packages) != tree.digest:
        out.append("the tree's digest is not over the packages it lists (edited by hand?)")
    return out


# What a dependency spec names as its source, as npm-package-arg reads it: None for the
# registry (a version, a range, a tag, an `npm:` alias), else a git repository, a URL or a
# local path (the kinds of :func:`outside`).
_LOCAL_SPEC = re.compile(r"^(?:file:|link:|[.]|~[/\\]|[/\\]|[A-Za-z]:)")
_GIT_SPEC = ("git+", "git:", "github:", "gitlab:", "bitbucket:", "gist:")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_HOSTED = {"github": "github.com", "gitlab": "gitlab.com", "bitbucket": "bitbucket.org"}


def spec_source(spec: str) -> str | None:
    """:data:`GIT`, :data:`ELSEWHERE` or :data:`LOCAL` for a spec that names its own source,
    None for one npm resolves from the registry."""
    s = spec.strip()
    if s.startswith("npm:"):
        return None
    if _LOCAL_SPEC.match(s):
        return LOCAL
    if s.lower().startswith(_GIT_SPEC):
        return GIT
    if _SCHEME.match(s):
        return ELSEWHERE
    return GIT if "/" in s else None  # `owner/repo`: a GitHub repository


def _alias_of(spec: str) -> str | None:
    """The package an `npm:` alias spec names (``npm:@a/b@^1`` -> ``@a/b``)."""
    if not spec.startswith("npm:"):
        return None
    rest = spec[4:].strip()
    at = rest.find("@", 1)
    return rest if at < 0 else rest[:at]


def _where_from(source: str) -> tuple[str, str]:
    """(host, path) of a git or tarball source, for comparing a spec with a `resolved`:
    no scheme, login, `git+`, `#ref`, `.git` or case (``github:a/b`` is GitHub's a/b)."""
    s = source.strip().split("#", 1)[0]
    short = re.match(r"^(?:(github|gitlab|bitbucket):)?([^:/@]+/[^:/]+)$", s)
    if short is not None:
        return _HOSTED[short.group(1) or "github"], "/" + short.group(2).lower().removesuffix(
            ".git"
        )
    parts = urllib.parse.urlsplit(s.removeprefix("git+"))
    try:
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        port = ":?"
    path = parts.path.rstrip("/").lower().removesuffix(".git")
    return (parts.hostname or "").lower() + port, path


def _edge_problem(edge: str, spec: str, target: TreePackage | None) -> str | None:
    """Why ``npm ci`` would not install ``target`` (the package the edge finds, None: none)
    for the edge ``edge`` with ``spec``, and resolve the edge again from its spec."""
    source = spec_source(spec)
    said = f"{edge} as `{_cut(spec)}`"
    again = "the registry" if source is None else f"`{_cut(spec)}`"
    if target is None:
        if source is None:
            # from the registry: npm ci then refuses the install (a package missing from
            # the lock); and npm writes no entry for one the server's tarball bundles, nor
            # for an optional one it could not resolve
            return None
        return f"{said}, which the tree does not hold: npm ci would resolve it again from {again}"
    if source is None:
        wanted = _alias_of(spec) or edge
        if target.name == wanted:
            return None
    elif source == LOCAL:
        if target.flag("link") or (target.resolved is not None and _local(target.resolved)):
            return None
    elif target.resolved is not None and _where_from(spec) == _where_from(target.resolved):
        return None
    return f"{said}, which {target.path} is not: npm ci would resolve it again from {again}"


def _edge_problems(tree: NpmTree) -> list[str]:
    """Each edge of the tree that its package does not satisfy (``npm ci`` re-resolves
    such an edge from its spec: a git repository or a URL the tree does not show)."""
    held = {p.path: p for p in tree.packages}
    out: list[str] = []
    for p in tree.packages:
        meta = dict(p.meta)
        for key in EDGE_FIELDS:
            for name, spec in json.loads(meta.get(key, "{}")).items():
                at = _find(held, p.path, name)
                why = _edge_problem(name, spec, held.get(at) if at else None)
                if why is not None:
                    out.append(f"{p.path} depends on {why}")
    return out


def _cut(text: str, size: int = 80) -> str:
    return text if len(text) <= size else text[: size - 1] + "…"


def in_scopes(tree: NpmTree, scopes: Iterable[str]) -> list[tuple[TreePackage, str]]:
    """The packages of ``tree`` in one of ``scopes`` (``@google``: a scope the project
    points at another registry), with that scope; case-insensitive, as a conservative
    reading of a scope's name."""
    wanted = {s.lower() for s in scopes}
    out = []
    for p in tree.packages:
        for name in dict.fromkeys((p.name.lower(), p.folder_name.lower())):
            scope = name.split("/", 1)[0] if name.startswith("@") else None
            if scope is not None and scope in wanted:
                out.append((p, scope))
                break
    return out


def _edges_of(package: TreePackage) -> list[str]:
    meta = dict(package.meta)
    names: list[str] = []
    for key in EDGE_FIELDS:
        if key in meta:
            names += list(json.loads(meta[key]))
    return names


def _find(held: dict[str, TreePackage], start: str, name: str) -> str | None:
    """Where node's resolution from the folder ``start`` finds ``name``: its own
    ``node_modules``, then each parent's, up to the top."""
    base = start
    while True:
        path = f"{base}/node_modules/{name}" if base else f"node_modules/{name}"
        if path in held:
            return path
        if not base:
            return None
        cut = base.rfind("/node_modules/")
        base = base[:cut] if cut >= 0 else ""


def dependency_path(tree: NpmTree, package: str, target: str) -> tuple[str, ...]:
    """The chain from the server (``node_modules/<package>``) to the package at ``target``
    along the tree's edges, as ``name@version`` each; just the target when no chain is
    found (an edge npm resolved that the tree does not spell)."""
    held = {p.path: p for p in tree.packages}
    start = f"node_modules/{package}"
    came: dict[str, str | None] = {start: None}
    queue = deque([start] if start in held else [])
    while queue and target not in came:
        here = queue.popleft()
        for name in _edges_of(held[here]):
            there = _find(held, here, name)
            if there is not None and there not in came:
                came[there] = here
                queue.append(there)
    chain: list[str] = []
    at: str | None = target if target in came else None
    while at is not None:
        chain.append(f"{held[at].name}@{held[at].version or '?'}")
        at = came[at]
    if not chain and target in held:
        chain = [f"{held[target].name}@{held[target].version or '?'}"]
    return tuple(reversed(chain))
