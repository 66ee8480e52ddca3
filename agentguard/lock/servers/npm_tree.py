"""An npm server's own dependency tree, through a real npm lock: one
``npm install --package-lock-only --ignore-scripts`` of the server's exact version in a
private scratch folder, and the ``package-lock.json`` it writes read as hostile data.

npm runs from the lock's registry only, with no ``.npmrc`` of the project, the user or
the system (its user and global configuration are empty files of the scratch folder, every
inherited ``npm_config_*`` variable is dropped, ``HOME`` is the scratch folder), with only
the environment a network client needs (``PATH``, the locale, the proxy and CA settings:
no token of the caller's), in a session of its own, bounded by the run's deadline, its
output capped (:mod:`.npm_run`). Only packuments are read: no tarball is unpacked and no
package code runs. Its cache is agentguard's own (``<cache>/npm``), never the user's.

What npm writes is the registry's data: it is capped (:data:`MAX_PACKAGE_LOCK_BYTES`,
nesting 32, 20,000 packages) and every package's shape is checked
(:mod:`.npm_tree_shape`); the server itself must be in it at the version and integrity
agentguard verified, or the tree is not npm's answer for this pin."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from agentguard import redact, safeio
from agentguard.facts.npm_tree import NpmTree, TreePackage, make_tree, problems
from agentguard.lock.deadline import DEADLINE_CODE, Deadline
from agentguard.lock.index import default_cache_dir
from agentguard.lock.servers import npm_run, sigstore_parts
from agentguard.lock.servers.npm_tree_shape import (
    MAX_TREE_PACKAGES,
    ShapeError,
    as_dict,
    package,
)
from agentguard.lock.urls import clean_url
from agentguard.scratch import scratch_folder

NPM_TREE_TIMEOUT = 300.0  # seconds for one npm run (and never past the run's deadline)
MAX_PACKAGE_LOCK_BYTES = 32 * 1024 * 1024
NPM_HEAP_MB = 2048  # npm's JavaScript heap (its own default grows with the machine)
# What npm and the git it may run get of the caller's environment: where programs are,
# the locale, and how to reach the network (proxies, CA certificates). No token, no
# NODE_OPTIONS, no npm_config_* variable, no git or ssh configuration of the caller's.
PASSED = (
    "PATH", "LANG", "LC_ALL", "LC_CTYPE", "SSL_CERT_FILE", "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS", "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy",
    "NO_PROXY", "no_proxy",
)  # fmt: skip
_ROOT_NAME = "agentguard-npm-tree"
# The ssh a git dependency over ssh runs (npm also falls back to ssh for a `github:` one):
# no configuration file, no prompt, and no identity of the user's. ssh reads `~/.ssh/id_*`
# and `known_hosts` from the account's home directory whatever `HOME` says, and a registry
# naming `git+ssh://git@host/org/private.git` would have npm clone a private repository with
# the runner's key: no key file, no agent, no authentication but "none".
SSH_COMMAND = " ".join(
    (
        "ssh -F none -o BatchMode=yes -o IdentityFile=none -o IdentityAgent=none",
        "-o IdentitiesOnly=yes -o PubkeyAuthentication=no -o HostbasedAuthentication=no",
        "-o GSSAPIAuthentication=no -o PasswordAuthentication=no",
        "-o KbdInteractiveAuthentication=no -o UserKnownHostsFile=/dev/null",
    )
)


class TreeError(Exception):
    def __init__(self, message: str, code: str, retryable: bool = False) -> None:
        super().__init__(message)
        self.code = code
        self.retryable = retryable


def npm_env(scratch: Path, registry: str, project: Path | None = None) -> dict[str, str]:
    """The environment of the npm run in ``scratch``, reading ``registry`` only (``PATH``:
    the machine's folders, none of ``project``'s)."""
    home, tmp = scratch / "home", scratch / "tmp"
    home.mkdir(exist_ok=True)
    tmp.mkdir(exist_ok=True)
    for name in ("npmrc", "global-npmrc", "gitconfig"):  # (npm refuses one file twice)
        (scratch / name).write_text("", encoding="utf-8")
    env = {k: os.environ[k] for k in PASSED if k in os.environ}
    env["PATH"] = npm_run.machine_path(project)
    env.setdefault("LANG", "C.UTF-8")
    env |= {
        "HOME": str(home),
        "TMPDIR": str(tmp),
        # npm holds every packument it reads in memory: a registry that sends huge ones
        # meets this cap (npm fails, a failed source) before the machine's memory
        "NODE_OPTIONS": f"--max-old-space-size={NPM_HEAP_MB}",
        "npm_config_registry": registry,
        "npm_config_userconfig": str(scratch / "npmrc"),
        "npm_config_globalconfig": str(scratch / "global-npmrc"),
        # (absolute: a relative AGENTGUARD_CACHE_DIR names a folder where agentguard started,
        # not one inside the scratch folder npm runs in)
        "npm_config_cache": str((default_cache_dir() / "npm").absolute()),
        "npm_config_ignore_scripts": "true",
        "npm_config_audit": "false",
        "npm_config_fund": "false",
        "npm_config_update_notifier": "false",
        "npm_config_package_lock": "true",
        "npm_config_lockfile_version": "3",
        "npm_config_omit_lockfile_registry_resolved": "false",  # every `resolved` written
        "npm_config_fetch_retries": "1",
        "npm_config_loglevel": "error",
        "npm_config_logs_max": "0",  # no debug log left in the cache
        "npm_config_progress": "false",
        # a git dependency: no prompt, no system or user git configuration, no ssh config
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": str(scratch / "gitconfig"),
        "GIT_SSH_COMMAND": SSH_COMMAND,
    }
    return env


def resolve_tree(
    package_name: str,
    version: str,
    integrity: str,
    registry: str,
    deadline: Deadline,
    project: Path | None = None,
) -> NpmTree:
    """The tree of ``package_name@version`` as npm resolves it from ``registry`` (the npm
    and node of the machine, none of ``project``'s); raises :class:`TreeError` (a failed
    source)."""
    npm = shutil.which("npm", path=npm_run.machine_path(project))
    if npm is None:
        raise TreeError(
            f"{package_name}@{version}: npm is not installed; its dependency tree needs a "
            "real npm lock",
            "npm-missing",
        )
    with scratch_folder("agentguard-npm-tree-") as scratch:
        work = scratch / "project"
        work.mkdir()
        manifest = {
            "name": _ROOT_NAME,
            "version": "0.0.0",
            "private": True,
            "dependencies": {package_name: version},
        }
        (work / "package.json").write_text(json.dumps(manifest), encoding="utf-8")
        argv = [npm, "install", "--package-lock-only", "--ignore-scripts", "--no-audit"]
        argv.append("--no-fund")
        ran = npm_run.run(
            argv, work, npm_env(scratch, registry, project), deadline.bound(NPM_TREE_TIMEOUT)
        )
        if ran.code is None:
            if deadline.passed:
                raise TreeError(
                    f"{package_name}@{version}: npm was stopped: {deadline.describe()}",
                    DEADLINE_CODE,
                    retryable=True,
                )
            raise TreeError(
                f"{package_name}@{version}: npm did not resolve the dependency tree within "
                f"{NPM_TREE_TIMEOUT:g} s (a stalled registry?)",
                "npm-tree-timeout",
                retryable=True,
            )
        if ran.code != 0:
            raise TreeError(
                f"{package_name}@{version}: npm could not resolve the dependency tree "
                f"(exit {ran.code}): {_said(ran.output)}",
                "npm-tree-failed",
            )
        try:
            raw = safeio.read_bytes(
                work / "package-lock.json", root=work, cap=MAX_PACKAGE_LOCK_BYTES
            )
        except OSError as exc:
            raise TreeError(
                f"{package_name}@{version}: npm's package-lock.json cannot be read: {exc}",
                "npm-tree-unreadable",
            ) from None
    tree = read_package_lock(raw, package_name)
    wrong = problems(tree, package_name, version, integrity)
    if wrong:
        raise TreeError(
            f"{package_name}@{version}: npm's tree is not the one agentguard verified: {wrong[0]}",
            "npm-tree-mismatch",
        )
    return tree


def _said(output: str) -> str:
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    lines = [line for line in lines if "complete log of this run" not in line]
    kept = [line for line in lines if "ERR" in line.upper()] or lines
    return redact.text(" / ".join(kept[-4:]))[:600] or "no output"


def _link_targets(entries: dict[str, object]) -> tuple[str, ...]:
    """Where the linked packages of a lock lie (a `file:` dependency is a link to a local
    folder, keyed by its path relative to the scratch project: ``../../x``)."""
    out = []
    for path, entry in entries.items():
        if isinstance(path, str) and path.startswith("node_modules/") and isinstance(entry, dict):
            target = entry.get("resolved")
            if entry.get("link") is True and isinstance(target, str) and target:
                out.append(target.rstrip("/"))
    return tuple(out)


def _inside_any(path: str, folders: tuple[str, ...]) -> bool:
    return not path.startswith("node_modules/") and any(
        path == f or path.startswith(f + "/") for f in folders
    )


def read_package_lock(raw: bytes, package_name: str) -> NpmTree:
    """The tree of a ``package-lock.json`` (version 2 or 3): every package but the root,
    each checked (:mod:`.npm_tree_shape`); raises :class:`TreeError`."""
    if len(raw) > MAX_PACKAGE_LOCK_BYTES:
        raise TreeError(
            f"{package_name}: npm's package-lock.json is over {MAX_PACKAGE_LOCK_BYTES} bytes",
            "npm-tree-unreadable",
        )
    try:
        data = as_dict(sigstore_parts.json_of(raw, "npm's package-lock.json"), "the lock")
        version = data.get("lockfileVersion")
        if version not in (2, 3) or isinstance(version, bool):
            raise ShapeError("not a package-lock of version 2 or 3")
        entries = as_dict(data.get("packages"), "packages")
        if len(entries) > MAX_TREE_PACKAGES:
            raise ShapeError(f"more than {MAX_TREE_PACKAGES} packages")
        packages: list[TreePackage] = []
        linked = _link_targets(entries)
        for path, entry in entries.items():
            if path == "" or _inside_any(path, linked):
                # the scratch folder's own package.json, and a local folder a `file:`
                # dependency links to (npm read it where it lies): the link itself is in the
                # tree, `link` with its `resolved` path (AG147), and nothing of that folder
                continue
            got = package(path, entry, f"packages[{redact.quote(str(path), 80)}]", strict=False)
            if got.resolved is not None:
                got = TreePackage(
                    got.path, got.version, clean_url(got.resolved), got.integrity, got.meta
                )
            packages.append(got)
    except sigstore_parts.Unreadable as exc:
        raise TreeError(f"{package_name}: {exc}", "npm-tree-unreadable") from None
    except ShapeError as exc:
        raise TreeError(
            f"{package_name}: npm's package-lock.json is refused: {redact.text(str(exc))[:400]}",
            "npm-tree-unreadable",
        ) from None
    return make_tree(packages, int(version))
