"""Writing `agentguard harden`'s files into the output folder (which is untrusted: often in
the checkout): a link at any name it writes is refused before anything is written, a file
changed by a person since the last run is kept unless ``--force``, and the files the last
run wrote and this one does not (its manifest) are removed.
"""

from __future__ import annotations

import hashlib
import json
import stat
from collections.abc import Mapping
from pathlib import Path

from agentguard import redact, safeio
from agentguard.errors import UsageError
from agentguard.findings import Source, SourceStatus

MANIFEST = ".agentguard-harden.json"  # the files the last run wrote (stale ones are removed)
MAX_MANIFEST_BYTES = 1024 * 1024


def digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _manifest(out: Path, sources: list[Source] | None = None) -> dict[str, str | None]:
    """What the last run wrote: file -> digest (None: an older manifest without digests).
    Read through the safe open (``out`` is untrusted); unreadable: nothing, said in
    ``sources``."""
    path = out / MANIFEST
    if not path.exists() and not path.is_symlink():
        return {}
    try:
        text = safeio.read_text(path, root=out, cap=MAX_MANIFEST_BYTES)
        files = json.loads(text).get("files", {})
    except (OSError, ValueError, AttributeError, RecursionError) as exc:
        if sources is not None:
            sources.append(
                Source.skipped("output", str(path), f"not read ({exc}): no stale file removed")
            )
        return {}
    if isinstance(files, list):
        return {str(f): None for f in files}
    if isinstance(files, dict):
        return {str(k): (v if isinstance(v, str) else None) for k, v in files.items()}
    return {}


def _on_disk(out: Path, rel: str) -> bytes | None:
    """The file's bytes when ``rel`` is a regular file inside ``out`` (never through a
    link, never outside), else None."""
    try:
        path = safeio.confined(out, rel)
        if not stat.S_ISREG(path.lstat().st_mode):
            return None
        return safeio.read_bytes(path, root=out)
    except OSError:
        return None


def refuse_links(out: Path, files: Mapping[str, str]) -> None:
    """A link at ``out`` or at any name this run would write there: :class:`UsageError`
    (exit 2), before anything is written (and before a planted link's failed read can
    turn the refusal into "an input failed")."""
    try:
        for rel in [*files, *(f + ".new" for f in files), MANIFEST]:
            target = safeio.confined(out, rel)
            if target.is_symlink():
                raise safeio.UnsafeWrite(f"{target}: is a symbolic link; refusing to write")
    except safeio.UnsafeWrite as exc:
        raise UsageError(f"harden output: {exc}") from None


def write_files(out: Path, files: Mapping[str, str], *, force: bool = False) -> list[Source]:
    """Write every file under ``out``; remove files an earlier run wrote and this one did not.

    A file changed since harden wrote it (its digest is not the manifest's) is the user's:
    it is kept, and the new one is written beside it as ``NAME.new`` (``force``: replaced).

    ``out`` is often inside the checkout, so nothing in it is trusted: a link at ``out``
    or at any file or folder this run writes is refused before anything is written
    (:class:`UsageError`, exit 2); each file is redacted and written atomically through
    :mod:`agentguard.safeio`; the previous run's manifest is read safely, and a listed
    name that is absolute or leaves ``out`` is refused (never removed).
    """
    refuse_links(out, files)
    files = {rel: redact.text(text) for rel, text in files.items()}
    sources: list[Source] = []
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return [
            Source.failed(
                "output", str(out), f"cannot create: {exc}", error_code="output-unwritable"
            )
        ]
    previous = _manifest(out, sources)
    record: dict[str, str] = {}
    for rel, text in sorted(files.items()):
        source, kept = _write_checked(out, rel, text, previous.get(rel), force=force)
        sources.append(source)
        if kept is None:
            record[rel] = digest(text.encode())
        else:
            if previous.get(rel):
                record[rel] = str(previous[rel])
            record[rel + ".new"] = digest(text.encode())
    for rel in sorted(set(previous) - set(record)):  # written before, not now (an old .new too)
        try:
            stale = safeio.confined(out, rel)
        except safeio.UnsafeWrite:
            sources.append(
                Source.skipped(
                    "output", rel, f"listed in {MANIFEST} but not a name inside {out}: not removed"
                )
            )
            continue
        current = _on_disk(out, rel)
        if current is None:
            continue
        if force or digest(current) == previous[rel]:
            safeio.remove_in(out, rel)
        else:
            sources.append(
                Source.skipped("output", str(stale), "changed since harden wrote it: kept")
            )
    sources += _write_manifest(out, record)
    return sources


def _write_checked(
    out: Path, rel: str, text: str, recorded: str | None, *, force: bool
) -> tuple[Source, str | None]:
    """(source, the kept file's name or None): the user's edit is never overwritten."""
    current = _on_disk(out, rel)
    data = text.encode()
    if force or current is None or current == data or digest(current) == recorded:
        return write_one(out, rel, text), None
    why = "changed since harden wrote it" if recorded else "not written by harden"
    src = write_one(out, rel + ".new", text)
    if src.status is SourceStatus.OK:
        src = Source.ok(
            "output",
            str(out / (rel + ".new")),
            f"{len(data)} bytes written beside {rel}, which was {why} and is kept "
            "(--force replaces it)",
        )
    return src, rel


def _write_manifest(out: Path, record: Mapping[str, str]) -> list[Source]:
    try:
        safeio.write_in(
            out, MANIFEST, json.dumps({"files": dict(sorted(record.items()))}, indent=1) + "\n"
        )
    except OSError as exc:
        return [
            Source.failed(
                "output",
                str(out / MANIFEST),
                f"cannot write: {exc}",
                error_code="output-unwritable",
            )
        ]
    return []


def rewrite_one(out: Path, rel: str, text: str, *, force: bool = False) -> Source:
    """One file written again (SUMMARY.md after --verify), edits kept as for write_files."""
    text = redact.text(text)
    previous = _manifest(out)
    source, kept = _write_checked(out, rel, text, previous.get(rel), force=force)
    record = {k: v for k, v in previous.items() if v is not None}
    record[rel + ".new" if kept else rel] = digest(text.encode())
    return next(iter(_write_manifest(out, record)), source)


def write_one(out: Path, rel: str, text: str) -> Source:
    """One file under ``out`` (already redacted), written atomically through
    :func:`safeio.write_in`: never through a link, never outside ``out``."""
    path = out / rel
    try:
        safeio.write_in(out, rel, text, 0o755 if rel.endswith(".sh") else 0)
    except OSError as exc:
        return Source.failed(
            "output",
            str(path),
            f"cannot write: {exc}",
            error_code="output-unwritable",
            retryable=False,
        )
    return Source.ok("output", str(path), f"{len(text.encode())} bytes written")
