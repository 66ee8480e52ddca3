"""``lock --export-npm DIR``: the tree of each npm server entry written back out as an npm
project that installs exactly that tree: ``DIR/<name>-<version>/package.json`` (the server
at its exact version, nothing else) and ``package-lock.json`` (lockfileVersion 3, every
package of the recorded tree with its resolved URL, integrity, edges, platform filters and
bins), for ``npm ci --ignore-scripts`` in the image. ``npm ci`` installs what the lock says
or fails: every tarball is checked against its integrity, nothing is resolved from a range.

Derived from ``mcp.lock.json`` alone (no registry read): what is written is what the lock
records. A folder two entries would write with different trees is written for neither
(two candidates are never resolved by taking the first); an entry without a tree is named
in the notes."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from agentguard import redact, safeio
from agentguard.facts.mcp_pins import NPM, ServerPin
from agentguard.findings import Source

_UNSAFE = re.compile(r"[^a-z0-9._-]+")


def folder_name(pin: ServerPin) -> str:
    """``@acme/tracker-mcp`` 2.0.1 -> ``acme__tracker-mcp-2.0.1`` (a name npm and a
    file system both take, never a path)."""
    name = _UNSAFE.sub("_", pin.package.lstrip("@").replace("/", "__").lower())
    return f"{name}-{pin.version}".lstrip(".") or "server"


def package_json(pin: ServerPin) -> str:
    doc = {
        "name": folder_name(pin).lower(),
        "version": "0.0.0",
        "private": True,
        "dependencies": {pin.package: pin.version},
    }
    return json.dumps(doc, indent=2) + "\n"


def package_lock(pin: ServerPin) -> str:
    assert pin.tree is not None
    root = {"name": folder_name(pin).lower(), "version": "0.0.0"}
    packages: dict[str, object] = {"": {**root, "dependencies": {pin.package: pin.version}}}
    for p in pin.tree.packages:
        entry = {k: v for k, v in p.as_json().items() if k != "path" and v is not None}
        packages[p.path] = entry
    doc = {**root, "lockfileVersion": 3, "requires": True, "packages": packages}
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def commands(pin: ServerPin) -> list[str]:
    """The commands the server package installs (``node_modules/.bin/NAME``)."""
    root = pin.tree.root_package(pin.package) if pin.tree else None
    bins = dict(root.meta).get("bin") if root else None
    return sorted(json.loads(bins)) if bins else []


def export(pins: Sequence[ServerPin], dest: Path) -> tuple[tuple[str, ...], tuple[Source, ...]]:
    """Write the kit of each npm pin under ``dest``; (notes, sources)."""
    notes: list[str] = []
    by_folder: dict[str, list[ServerPin]] = defaultdict(list)
    for pin in pins:
        if pin.kind != NPM:
            continue
        if pin.tree is None:
            notes.append(
                f"{pin.package} {pin.version} (MCP server {pin.server!r}): not exported, "
                "the lock records no dependency tree for it (re-lock to record one)."
            )
            continue
        by_folder[folder_name(pin)].append(pin)
    sources: list[Source] = []
    for folder, same in sorted(by_folder.items()):
        if len({p.tree for p in same}) > 1:
            notes.append(
                f"{folder}: not exported, {len(same)} entries of {same[0].package} "
                f"{same[0].version} record different trees (servers "
                f"{', '.join(sorted(repr(p.server) for p in same))})."
            )
            continue
        pin = same[0]
        try:
            safeio.write_in(dest, f"{folder}/package.json", package_json(pin))
            safeio.write_in(dest, f"{folder}/package-lock.json", package_lock(pin))
        except OSError as exc:
            sources.append(
                Source.failed(
                    "npm-kit",
                    f"{dest.name}/{folder}",
                    f"could not be written: {redact.text(str(exc))}",
                    error_code="npm-kit-unwritable",
                    retryable=False,
                )
            )
            continue
        run = ", ".join(f"`node_modules/.bin/{c}`" for c in commands(pin)) or "its entry point"
        notes.append(
            f"Wrote {dest.name}/{folder} ({len(pin.tree.packages) if pin.tree else 0} "
            f"packages): `npm ci --ignore-scripts` there installs exactly the locked tree of "
            f"{pin.package} {pin.version}; then launch {run}."
        )
    return tuple(notes), tuple(sources)
