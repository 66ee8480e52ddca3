"""What an index page says: its files (name, URL, version, hashes, flags) and versions.

Speaks the simple repository API: PEP 691 JSON and PEP 503 HTML. Nothing a page says is
trusted as more than data: a hash is kept only when it is 64 hex digits (it names cache
files), and URLs are checked by the client before anything is read from them.
"""

from __future__ import annotations

import functools
import re
import urllib.parse
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

from agentguard import redact
from agentguard.facts.graph import ReleasedVersions

_HEX64 = re.compile(r"[0-9a-fA-F]{64}")


MAX_PAGE_BYTES = 64 * 1024 * 1024  # one index page (HTTP or a local file)


def sha256_or_none(value: object) -> str | None:
    """A sha256 as the index gave it, when it is one (64 hex digits), else None."""
    if isinstance(value, str) and _HEX64.fullmatch(value):
        return value.lower()
    return None


class IndexError_(Exception):
    """The index could not be read. ``retryable`` says whether trying again may help."""

    def __init__(self, message: str, *, code: str, retryable: bool) -> None:
        super().__init__(redact.url(message))
        self.code = code
        self.retryable = retryable


@dataclass(frozen=True)
class IndexFile:
    filename: str
    url: str
    version: Version
    sha256: str | None
    size: int | None
    upload_time: str | None
    requires_python: str | None
    yanked: bool
    has_metadata: bool  # PEP 658/714 metadata file advertised
    metadata_sha256: str | None = None  # the hash the index gives for that metadata file
    page_url: str = ""  # the page that named it (whose origin decides what may be read)

    @property
    def is_wheel(self) -> bool:
        return self.filename.endswith(".whl")


class ProjectPage:
    """The files of one project.

    JSON pages list thousands of files (pydantic-core: 15k), and a lock needs the files of
    one version plus the list of released versions. So a JSON page keeps its raw items
    and the index's own version list (PEP 700); files are grouped by version and turned
    into IndexFile only when something asks for them.
    """

    def __init__(
        self,
        name: str,
        files: Iterable[IndexFile] = (),
        raw: dict[str, list[Callable[[], IndexFile | None]]] | None = None,
        yanked_only: frozenset[str] = frozenset(),
        *,
        items: list[dict[str, Any]] | None = None,
        page_url: str = "",
        versions_hint: list[str] | None = None,
    ) -> None:
        self.name = name
        self._raw: dict[str, list[Callable[[], IndexFile | None]]] | None = {
            k: list(v) for k, v in (raw or {}).items()
        }
        self._yanked_only = set(yanked_only)
        self._items = items
        self._page_url = page_url
        self._versions_hint = versions_hint
        self._by_version: dict[Version, list[dict[str, Any]]] | None = None
        self._released: ReleasedVersions | None = None
        if items is not None:
            self._raw = None  # grouped on demand
        for f in files:
            self._grouped().setdefault(str(f.version), []).append(functools.partial(_same, f))
            if not f.yanked:
                self._yanked_only.discard(str(f.version))

    def _items_by_version(self) -> dict[Version, list[dict[str, Any]]]:
        """A JSON page's raw items by version, worked out once (one pass over the items):
        a lock asks for the files of several versions of one page."""
        if self._by_version is None:
            index: dict[Version, list[dict[str, Any]]] = {}
            for item in self.raw_items or []:
                vtext = item_version_text(item)
                v = _parse_version(vtext) if vtext is not None else None
                if v is not None:
                    index.setdefault(v, []).append(item)
            self._by_version = index
        return self._by_version

    def _grouped(self) -> dict[str, list[Callable[[], IndexFile | None]]]:
        if self._raw is None:
            raw: dict[str, list[Callable[[], IndexFile | None]]] = {}
            not_yanked: set[str] = set()
            for item in self.raw_items or []:
                vtext = item_version_text(item)
                if vtext is None:
                    continue
                raw.setdefault(vtext, []).append(
                    functools.partial(_json_file, self._page_url, self.name, item)
                )
                if not item.get("yanked"):
                    not_yanked.add(vtext)
            self._yanked_only = set(raw) - not_yanked
            self._raw = raw
        return self._raw

    def merge(self, other: ProjectPage) -> ProjectPage:
        mine, theirs = self._grouped(), other._grouped()
        raw = {k: list(v) for k, v in mine.items()}
        for k, v in theirs.items():
            raw.setdefault(k, []).extend(v)
        both = {
            k
            for k in self._yanked_only | other._yanked_only
            if (k not in mine or k in self._yanked_only)
            and (k not in theirs or k in other._yanked_only)
        }
        return ProjectPage(self.name, raw=raw, yanked_only=frozenset(both))

    def __len__(self) -> int:
        if self._raw is None:
            return len(self._items or [])
        return sum(len(v) for v in self._raw.values())

    @property
    def files(self) -> tuple[IndexFile, ...]:
        out: list[IndexFile] = []
        for makers in self._grouped().values():
            out.extend(f for f in (m() for m in makers) if f is not None)
        return tuple(out)

    def versions(self) -> list[Version]:
        return sorted(v for v in (_parse_version(k) for k in self._grouped()) if v is not None)

    def warm(self) -> None:
        """Work out, on the thread that read the page, what every lock asks of it: the files
        by version and the released versions with their majors (then a re-lock's analysis,
        which waits for the last page, finds them done)."""
        if self._raw is None:
            self._items_by_version()
        released = self.released_versions()
        released.groups()
        released.keys()

    def released_versions(self) -> ReleasedVersions:
        """Versions with at least one non-yanked file, pre-releases excluded (worked out
        once: a page's versions never change once read)."""
        if self._released is None:
            self._released = ReleasedVersions(self._released_versions())
        return self._released

    @property
    def raw_items(self) -> list[dict[str, Any]] | None:
        """A JSON page's items as the index gave them (None: not a JSON page)."""
        return self._items

    @property
    def versions_hint(self) -> list[str] | None:
        """The index's own version list (PEP 700), when a JSON page gives one."""
        return self._versions_hint

    def yanked_versions(self) -> set[str]:
        """The version texts of a JSON page every file of which is yanked."""
        items = self.raw_items or []
        yanked = {_version_text(str(i.get("filename", ""))) for i in items if i.get("yanked")}
        if yanked:
            alive = {
                _version_text(str(i.get("filename", "")))
                for i in items
                if not i.get("yanked") and _version_text(str(i.get("filename", ""))) in yanked
            }
            yanked -= alive
        return {v for v in yanked if v is not None}

    def _items_for(self, version: Version) -> list[dict[str, Any]]:
        return self._items_by_version().get(version, [])

    def _released_versions(self) -> list[Version]:
        if self._raw is None and self._versions_hint is not None:
            # PyPI yanks whole releases: a version is out when every file of it is yanked.
            yanked = self.yanked_versions()
            keys = [k for k in self._versions_hint if k not in yanked]
        else:
            grouped = self._grouped()
            keys = [k for k in grouped if k not in self._yanked_only]
        out = []
        for k in keys:
            v = _parse_version(k)
            if v is not None and not v.is_prerelease:
                out.append(v)
        return sorted(set(out))

    def upload_times(self, version: Version) -> list[str]:
        """The upload times the page gives for the files of ``version`` (text, as given):
        read from a JSON page's items without making an IndexFile of each."""
        if self._raw is None:
            items = self._items_for(version)
            return [str(i["upload-time"]) for i in items if i.get("upload-time")]
        return [f.upload_time for f in self.files_for(version) if f.upload_time]

    def lists(self, version: Version, sha256s: set[str]) -> bool:
        """True when the page lists an unyanked file of ``version`` with one of ``sha256s``."""
        if self._raw is None:
            for item in self._items_for(version):
                hashes = item.get("hashes")
                sha = sha256_or_none(hashes.get("sha256")) if isinstance(hashes, dict) else None
                if sha in sha256s and not item.get("yanked"):
                    return True
            return False
        return any(f.sha256 in sha256s and not f.yanked for f in self.files_for(version))

    def files_for(self, version: Version) -> list[IndexFile]:
        if self._raw is None:
            out: list[IndexFile] = []
            for item in self._items_for(version):
                f = _json_file(self._page_url, self.name, item)
                if f is not None:
                    out.append(f)
            return out
        out = []
        for k, makers in self._raw.items():
            if _parse_version(k) == version:
                out.extend(f for f in (m() for m in makers) if f is not None)
        return out


def _same(f: IndexFile) -> IndexFile:
    return f


_VERSION_CACHE: dict[str, Version | None] = {}


def _parse_version(text: str) -> Version | None:
    try:
        return _VERSION_CACHE[text]
    except KeyError:
        pass
    try:
        v: Version | None = Version(text)
    except InvalidVersion:
        v = None
    _VERSION_CACHE[text] = v
    return v


def _version_of(filename: str, name: str) -> Version | None:
    """The version in a wheel or sdist file name (cheap split first: pages list thousands)."""
    if filename.endswith(".whl"):
        parts = filename.split("-")
        if len(parts) in (5, 6):
            return _parse_version(parts[1])
        try:
            return parse_wheel_filename(filename)[1]
        except (InvalidWheelFilename, InvalidVersion):
            return None
    for ext in (".tar.gz", ".zip"):
        if filename.endswith(ext):
            stem = filename[: -len(ext)]
            if "-" in stem:
                return _parse_version(stem.rsplit("-", 1)[1])
            try:
                return parse_sdist_filename(filename)[1]
            except (InvalidSdistFilename, InvalidVersion):
                return None
    return None


def _split_hash(url: str) -> tuple[str, str | None]:
    base, _, frag = url.partition("#")
    return base, sha256_or_none(frag[len("sha256=") :]) if frag.startswith("sha256=") else None


def parse_html_page(name: str, page_url: str, html: str) -> ProjectPage:
    from agentguard.lock.html_anchors import AnchorParser  # (an index that serves HTML)

    parser = AnchorParser()
    parser.feed(html)
    files: list[IndexFile] = []
    for a in parser.anchors:
        href = a.get("href")
        if not href:
            continue
        url, sha = _split_hash(urllib.parse.urljoin(page_url, href))
        filename = urllib.parse.unquote(url.rsplit("/", 1)[-1])
        version = _version_of(filename, name)
        if version is None:
            continue
        meta = a.get("data-core-metadata") or a.get("data-dist-info-metadata")
        meta_hash = meta.partition("=")[2] if meta and meta.startswith("sha256=") else None
        files.append(
            IndexFile(
                filename=filename,
                url=url,
                version=version,
                sha256=sha,
                size=None,
                upload_time=None,
                requires_python=a.get("data-requires-python"),
                yanked="data-yanked" in a,
                has_metadata=bool(meta) and meta != "false",
                metadata_sha256=sha256_or_none(meta_hash),
                page_url=page_url,
            )
        )
    return ProjectPage(name, tuple(files))


def item_version_text(item: dict[str, Any]) -> str | None:
    """The version text of a JSON page's file item, from its file name (None: none)."""
    filename = item.get("filename")
    return _version_text(filename) if isinstance(filename, str) else None


def _version_text(filename: str) -> str | None:
    if filename.endswith(".whl"):
        parts = filename.split("-")
        return parts[1] if len(parts) in (5, 6) else None
    for ext in (".tar.gz", ".zip"):
        if filename.endswith(ext):
            stem = filename[: -len(ext)]
            return stem.rsplit("-", 1)[1] if "-" in stem else None
    return None


def parse_json_page(name: str, page_url: str, data: dict[str, object]) -> ProjectPage:
    raw_files = data.get("files")
    if not isinstance(raw_files, list):
        raise IndexError_(
            f"index page for {name} has no file list", code="index-garbage", retryable=False
        )
    items = [i for i in raw_files if isinstance(i, dict)]
    hint = data.get("versions")
    versions = [str(v) for v in hint] if isinstance(hint, list) else None
    return ProjectPage(name, items=items, page_url=page_url, versions_hint=versions)


def _json_file(page_url: str, name: str, item: dict[str, Any]) -> IndexFile | None:
    filename = str(item.get("filename", ""))
    version = _version_of(filename, name)
    if version is None:
        return None
    hashes = item.get("hashes") if isinstance(item.get("hashes"), dict) else {}
    assert isinstance(hashes, dict)
    meta = item.get("core-metadata", item.get("dist-info-metadata"))
    size = item.get("size")
    meta_hashes = meta if isinstance(meta, dict) else {}
    return IndexFile(
        filename=filename,
        url=_absolute(page_url, str(item.get("url", ""))),
        version=version,
        sha256=sha256_or_none(hashes.get("sha256")),
        size=size if isinstance(size, int) else None,
        upload_time=str(item["upload-time"]) if item.get("upload-time") else None,
        requires_python=str(item["requires-python"]) if item.get("requires-python") else None,
        yanked=bool(item.get("yanked")),
        has_metadata=bool(meta),
        metadata_sha256=sha256_or_none(meta_hashes.get("sha256")),
        page_url=page_url,
    )


def _absolute(base: str, url: str) -> str:
    return (
        url if url.startswith(("https://", "http://", "file:")) else urllib.parse.urljoin(base, url)
    )
