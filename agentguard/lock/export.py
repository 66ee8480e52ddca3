"""``agentguard lock --export requirements|pylock``: the project's own lock (uv.lock,
poetry.lock) written out as a hash-pinned ``requirements.lock`` or a PEP 751
``pylock.toml``, for installers that read those. Only when asked: by default nothing
competes with the project's lock. Each file says it is an export, so that the next run
still takes the project's lock as the lock."""

from __future__ import annotations

from typing import Any

import tomli_w
from packaging.pylock import Pylock
from packaging.version import Version

from agentguard.errors import UsageError
from agentguard.lock.mutex import PYLOCK, REQUIREMENTS_LOCK
from agentguard.lock.readers.install_view import installed_by
from agentguard.lock.readers.interface import ExistingLock, LockPin
from agentguard.lock.which_lock import CREATED_BY, EXPORT_MARK, is_export

EXPORTS = ("requirements", "pylock")
__all__ = ["EXPORTS", "is_export", "render_export"]


def _selected(lock: ExistingLock) -> list[tuple[LockPin, str | None]]:
    by_key = {(p.name, p.version): p for p in lock.pins if not p.local}
    out = []
    for name, version, marker in installed_by(lock):
        pin = by_key.get((name, version or ""))
        if pin is not None:
            out.append((pin, marker))
    return sorted(out, key=lambda pm: (pm[0].name, Version(pm[0].version), pm[1] or ""))


def render_export(lock: ExistingLock, kind: str) -> tuple[str, str]:
    """(file name, text) of the export."""
    if kind not in EXPORTS:
        raise UsageError(f"--export {kind!r}: expected one of {', '.join(EXPORTS)}")
    pins = _selected(lock)
    unhashed = [p.name for p, _ in pins if not p.hashes]
    if unhashed:
        raise UsageError(
            f"cannot export {lock.path}: {', '.join(unhashed)} carry no hash (git, url or "
            "local sources)"
        )
    if kind == "requirements":
        lines = [
            f"{EXPORT_MARK}{lock.path}; do not edit. Re-run it after re-locking.",
            f"# Install with: pip install --no-deps --require-hashes -r {REQUIREMENTS_LOCK}",
        ]
        for pin, marker in pins:
            head = f"{pin.name}=={pin.version}" + (f" ; {marker}" if marker else "")
            lines.append(head + " \\")
            lines.extend(
                f"    --hash={h}" + (" \\" if i < len(pin.hashes) - 1 else "")
                for i, h in enumerate(pin.hashes)
            )
        return REQUIREMENTS_LOCK, "\n".join(lines) + "\n"
    packages: list[dict[str, Any]] = []
    for pin, marker in pins:
        if any(not f.url for f in pin.files):
            raise UsageError(
                f"cannot export {lock.path} as {PYLOCK}: it names no URL for the files of "
                f"{pin.name} (export requirements instead)"
            )
        pkg: dict[str, Any] = {"name": pin.name, "version": pin.version}
        if marker:
            pkg["marker"] = marker
        if pin.index and "://" in pin.index:
            pkg["index"] = pin.index
        wheels = [f for f in pin.files if f.filename.endswith(".whl")]
        sdists = [f for f in pin.files if not f.filename.endswith(".whl")]
        if sdists:
            pkg["sdist"] = {
                "name": sdists[0].filename,
                "url": sdists[0].url,
                "hashes": {"sha256": sdists[0].sha256 or ""},
            }
        if wheels:
            pkg["wheels"] = [
                {"name": f.filename, "url": f.url, "hashes": {"sha256": f.sha256 or ""}}
                for f in wheels
            ]
        packages.append(pkg)
    data = {"lock-version": "1.0", "created-by": CREATED_BY, "packages": packages}
    Pylock.from_dict(data)  # raises if this would not be a valid PEP 751 file
    header = f"{EXPORT_MARK}{lock.path} (PEP 751); do not edit. Re-run it after re-locking.\n"
    return PYLOCK, header + tomli_w.dumps(data)
