"""Core metadata of one wheel: its ``Requires-Dist``, read once and cached.

From the PEP 658 ``.metadata`` file when the index serves one (checked against the hash the
index gives for it, and against the wheel's name and version), else from the wheel itself
(checked against the wheel's sha256). The cache has two halves, so that one index can never
speak for another: what was read out of a hash-checked wheel is keyed by that hash and true
for every index; what an index's ``.metadata`` said is keyed by where it was read and by
both hashes, and is used only for that same URL and those same hashes.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import threading
import zipfile
import zlib
from collections.abc import Callable, Mapping
from pathlib import Path

from packaging.metadata import parse_email
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from agentguard.lock.pages import IndexError_, IndexFile, sha256_or_none

MAX_METADATA_BYTES = 16 * 1024 * 1024
MAX_WHEEL_BYTES = 512 * 1024 * 1024
MAX_REQUIRES_DIST = 5000  # the largest real ones hold a few hundred
_REQUIRES_DIST = re.compile(r"^requires-dist[ \t]*:", re.IGNORECASE | re.MULTILINE)
_HEADERS_END = re.compile(r"\r?\n\r?\n")

Fetch = Callable[[str, int], bytes]  # (url, limit) -> body; raises IndexError_


def headers_of(text: str) -> str:
    """The header block of a METADATA file (the description after it can be megabytes)."""
    m = _HEADERS_END.search(text)
    return text[: m.start()] + "\n" if m else text


def requires_of(text: str, filename: str) -> list[str]:
    """The valid ``Requires-Dist`` lines, refusing a file with more than the cap."""
    headers = headers_of(text)
    count = sum(1 for _ in _REQUIRES_DIST.finditer(headers))
    if count > MAX_REQUIRES_DIST:
        raise IndexError_(
            f"{filename}: {count} Requires-Dist entries (more than {MAX_REQUIRES_DIST}, the cap)",
            code="too-many-requirements",
            retryable=False,
        )
    raw, _unparsed = parse_email(headers)
    out: list[str] = []
    for line in raw.get("requires_dist", []) or []:
        try:
            Requirement(line)
        except InvalidRequirement:
            continue
        out.append(line)
    return out


def describes(text: str, file: IndexFile) -> bool:
    """Whether a served metadata file is about this wheel (Name and Version match); an
    answer that is not (an error page, garbage) must never read as "no requirements"."""
    try:
        raw, _ = parse_email(headers_of(text))
        name, version = raw.get("name"), raw.get("version")
        wanted = canonicalize_name(file.filename.split("-", 1)[0])
        return (
            isinstance(name, str)
            and isinstance(version, str)
            and canonicalize_name(name) == wanted
            and Version(version) == file.version
        )
    except (ValueError, TypeError):
        return False


def from_wheel(data: bytes, filename: str) -> str:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            names = [n for n in zf.namelist() if re.fullmatch(r"[^/]+\.dist-info/METADATA", n)]
            if len(names) != 1:
                raise IndexError_(
                    f"{filename}: {len(names)} METADATA files in the wheel",
                    code="bad-wheel",
                    retryable=False,
                )
            info = zf.getinfo(names[0])
            if info.file_size > MAX_METADATA_BYTES:
                raise IndexError_(
                    f"{filename}: METADATA too large", code="bad-wheel", retryable=False
                )
            return zf.read(info).decode("utf-8", "replace")
    except zipfile.BadZipFile:
        raise IndexError_(
            f"{filename}: not a zip file", code="bad-wheel", retryable=False
        ) from None
    except (NotImplementedError, RuntimeError, EOFError, ValueError, zlib.error) as exc:
        # unsupported compression, encrypted members, a stream cut short
        raise IndexError_(
            f"{filename}: METADATA cannot be read ({exc})", code="bad-wheel", retryable=False
        ) from None


class MetadataCache:
    """``Requires-Dist`` lists on disk. Every file name is a hex digest made here, never a
    value an index sent."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _wheel_path(self, wheel_sha256: str) -> Path:
        return self.folder / "requires-v2" / "wheel" / wheel_sha256[:2] / f"{wheel_sha256}.json"

    def _served_path(self, url: str, wheel_sha256: str, meta_sha256: str | None) -> Path:
        key = hashlib.sha256(f"{url}\n{wheel_sha256}\n{meta_sha256 or ''}".encode()).hexdigest()
        return self.folder / "requires-v2" / "served" / key[:2] / f"{key}.json"

    def get(self, file: IndexFile, metadata_url: str) -> list[str] | None:
        sha = sha256_or_none(file.sha256)
        if sha is None:
            return None
        found = _read(self._wheel_path(sha), {"wheel-sha256": sha})
        if found is None:
            wanted: dict[str, str | None] = {
                "wheel-sha256": sha,
                "metadata-url": metadata_url,
                "metadata-sha256": file.metadata_sha256,
            }
            found = _read(self._served_path(metadata_url, sha, file.metadata_sha256), wanted)
        return found

    def put_verified(self, file: IndexFile, requires: list[str]) -> None:
        sha = sha256_or_none(file.sha256)
        if sha is not None:
            _write(self._wheel_path(sha), {"wheel-sha256": sha, "requires": requires})

    def put_served(self, file: IndexFile, metadata_url: str, requires: list[str]) -> None:
        sha = sha256_or_none(file.sha256)
        if sha is not None:
            entry = {
                "wheel-sha256": sha,
                "metadata-url": metadata_url,
                "metadata-sha256": file.metadata_sha256,
                "requires": requires,
            }
            _write(self._served_path(metadata_url, sha, file.metadata_sha256), entry)


def _read(path: Path, wanted: Mapping[str, str | None]) -> list[str] | None:
    try:
        with open(path, encoding="utf-8") as fh:
            entry = json.loads(fh.read(MAX_METADATA_BYTES))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(entry, dict) or any(entry.get(k) != v for k, v in wanted.items()):
        return None
    requires = entry.get("requires")
    if isinstance(requires, list) and all(isinstance(x, str) for x in requires):
        return requires
    return None


def _write(path: Path, entry: Mapping[str, object]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}-{threading.get_ident()}.tmp")
        tmp.write_text(json.dumps(entry), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass  # a cache that cannot be written only costs speed


def requires_dist(
    file: IndexFile, cache: MetadataCache, fetch: Fetch, read_local: Fetch
) -> list[str]:
    """The valid ``Requires-Dist`` lines of one wheel (see the module's docstring)."""
    metadata_url = file.url + ".metadata"
    cached = cache.get(file, metadata_url)
    if cached is not None:
        return cached
    if file.url.startswith("file:"):
        body = read_local(file.url, MAX_WHEEL_BYTES)
    else:
        served = _served_or_none(file, cache, metadata_url, fetch)
        if served is not None:
            return served
        # No metadata file, or one that is not this wheel's: read the (hash-checked) wheel.
        body = fetch(file.url, MAX_WHEEL_BYTES)
    sha = sha256_or_none(file.sha256)
    if sha is not None and hashlib.sha256(body).hexdigest() != sha:
        raise IndexError_(
            f"{file.filename}: sha256 does not match the index",
            code="hash-mismatch",
            retryable=True,
        )
    requires = requires_of(from_wheel(body, file.filename), file.filename)
    cache.put_verified(file, requires)
    return requires


def _served_or_none(
    file: IndexFile, cache: MetadataCache, metadata_url: str, fetch: Fetch
) -> list[str] | None:
    """The requirements the index's ``.metadata`` file gives, when it serves one that is
    this wheel's (and hashes to what the index says)."""
    text: str | None = None
    try:
        body = fetch(metadata_url, MAX_METADATA_BYTES)
        if file.metadata_sha256 is None or hashlib.sha256(body).hexdigest() == file.metadata_sha256:
            text = body.decode("utf-8", "replace")
    except IndexError_ as exc:
        if exc.code not in ("index-not-found", "index-http-error", "index-auth-failed"):
            raise
    if text is not None and describes(text, file):
        requires = requires_of(text, file.filename)
        cache.put_served(file, metadata_url, requires)
        return requires
    return None
