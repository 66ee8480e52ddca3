"""A small, read-only client for package indexes: version lists and core metadata.

Speaks the simple repository API (PEP 691 JSON, PEP 503 HTML) over http(s) and
``file://``, and reads flat ``--find-links`` folders. Core metadata comes from the
PEP 658 ``.metadata`` file when the index serves one, else from the wheel itself.
Metadata is cached on disk by the wheel's sha256 (immutable), so a warm re-lock
needs no metadata download at all.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

TIMEOUT = 30.0
MAX_PAGE_BYTES = 64 * 1024 * 1024
MAX_METADATA_BYTES = 16 * 1024 * 1024
USER_AGENT = "agentguard (+lock)"


class IndexError_(Exception):
    """The index could not be read. ``retryable`` says whether trying again may help."""

    def __init__(self, message: str, *, code: str, retryable: bool) -> None:
        super().__init__(message)
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

    @property
    def is_wheel(self) -> bool:
        return self.filename.endswith(".whl")


@dataclass(frozen=True)
class ProjectPage:
    name: str
    files: tuple[IndexFile, ...]

    def versions(self) -> list[Version]:
        return sorted({f.version for f in self.files})

    def released_versions(self) -> list[Version]:
        """Versions with at least one non-yanked file, pre-releases excluded."""
        return sorted(
            {f.version for f in self.files if not f.yanked and not f.version.is_prerelease}
        )

    def files_for(self, version: Version) -> list[IndexFile]:
        return [f for f in self.files if f.version == version]


def _version_of(filename: str, name: str) -> Version | None:
    try:
        if filename.endswith(".whl"):
            return parse_wheel_filename(filename)[1]
        if filename.endswith((".tar.gz", ".zip")):
            return parse_sdist_filename(filename)[1]
    except (InvalidWheelFilename, InvalidSdistFilename, InvalidVersion):
        return None
    return None


class _AnchorParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.anchors: list[dict[str, str | None]] = []
        self._current: dict[str, str | None] | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self._current = dict(attrs)
            self._text = []

    def handle_data(self, data: str) -> None:
        if self._current is not None:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self._current is not None:
            self._current["_text"] = "".join(self._text).strip()
            self.anchors.append(self._current)
            self._current = None


def _split_hash(url: str) -> tuple[str, str | None]:
    base, _, frag = url.partition("#")
    m = re.match(r"sha256=([0-9a-fA-F]{64})", frag)
    return base, (m.group(1).lower() if m else None)


def parse_html_page(name: str, page_url: str, html: str) -> ProjectPage:
    parser = _AnchorParser()
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
            )
        )
    return ProjectPage(name, tuple(files))


def parse_json_page(name: str, page_url: str, data: dict[str, object]) -> ProjectPage:
    files: list[IndexFile] = []
    raw_files = data.get("files")
    if not isinstance(raw_files, list):
        raise IndexError_(
            f"index page for {name} has no file list", code="index-garbage", retryable=False
        )
    for item in raw_files:
        if not isinstance(item, dict):
            continue
        filename = str(item.get("filename", ""))
        version = _version_of(filename, name)
        if version is None:
            continue
        hashes = item.get("hashes") if isinstance(item.get("hashes"), dict) else {}
        assert isinstance(hashes, dict)
        meta = item.get("core-metadata", item.get("dist-info-metadata"))
        size = item.get("size")
        files.append(
            IndexFile(
                filename=filename,
                url=urllib.parse.urljoin(page_url, str(item.get("url", ""))),
                version=version,
                sha256=str(hashes["sha256"]).lower() if "sha256" in hashes else None,
                size=size if isinstance(size, int) else None,
                upload_time=str(item["upload-time"]) if item.get("upload-time") else None,
                requires_python=str(item["requires-python"])
                if item.get("requires-python")
                else None,
                yanked=bool(item.get("yanked")),
                has_metadata=bool(meta),
            )
        )
    return ProjectPage(name, tuple(files))


def _file_path(url: str) -> Path:
    return Path(urllib.request.url2pathname(urllib.parse.urlparse(url).path))


def _http_get(
    url: str, accept: str | None = None, limit: int = MAX_PAGE_BYTES
) -> tuple[bytes, str]:
    headers = {"User-Agent": USER_AGENT}
    if accept:
        headers["Accept"] = accept
    req = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=TIMEOUT) as resp:
            body = resp.read(limit + 1)
            if len(body) > limit:
                raise IndexError_(
                    f"{url}: answer larger than {limit} bytes",
                    code="index-too-large",
                    retryable=False,
                )
            return body, resp.headers.get("Content-Type", "")
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            raise IndexError_(
                f"{url}: not found (404)", code="index-not-found", retryable=False
            ) from None
        raise IndexError_(
            f"{url}: HTTP {exc.code}",
            code="index-http-error",
            retryable=exc.code >= 500 or exc.code == 429,
        ) from None
    except (urllib.error.URLError, OSError, TimeoutError) as exc:
        reason = getattr(exc, "reason", exc)
        raise IndexError_(
            f"{url}: unreachable ({reason})", code="index-unreachable", retryable=True
        ) from None


class IndexClient:
    """Reads project pages from one or more indexes and find-links folders."""

    def __init__(
        self,
        index_urls: Iterable[str],
        find_links: Iterable[str] = (),
        cache_dir: Path | None = None,
    ) -> None:
        self.index_urls = [u.rstrip("/") + "/" for u in index_urls]
        self.find_links = list(find_links)
        self.cache_dir = cache_dir or default_cache_dir()

    # -- project pages -------------------------------------------------------------
    def project_page(self, name: str) -> ProjectPage:
        cname = canonicalize_name(name)
        files: list[IndexFile] = []
        errors: list[IndexError_] = []
        found = False
        for base in self.index_urls:
            try:
                page = self._index_page(base, cname)
            except IndexError_ as exc:
                if exc.code == "index-not-found":
                    continue
                errors.append(exc)
                continue
            found = True
            files.extend(page.files)
        for link in self.find_links:
            page = self._find_links_page(link, cname)
            if page.files:
                found = True
                files.extend(page.files)
        if errors and not found:
            raise errors[0]
        if errors:
            # One index answered, another failed: the version list may be partial.
            raise errors[0]
        if not found:
            raise IndexError_(f"{name}: not on any index", code="index-not-found", retryable=False)
        return ProjectPage(cname, tuple(files))

    def _index_page(self, base: str, cname: str) -> ProjectPage:
        url = f"{base}{cname}/"
        if url.startswith("file:"):
            folder = _file_path(url)
            index_html = folder / "index.html"
            if index_html.is_file():
                return parse_html_page(
                    cname, index_html.as_uri(), index_html.read_text("utf-8", "replace")
                )
            if folder.is_dir():
                return self._folder_page(folder, cname)
            raise IndexError_(f"{url}: not found", code="index-not-found", retryable=False)
        body, ctype = _http_get(url, accept="application/vnd.pypi.simple.v1+json, text/html;q=0.1")
        if "json" in ctype:
            try:
                data = json.loads(body)
            except ValueError:
                raise IndexError_(
                    f"{url}: answer is not JSON", code="index-garbage", retryable=True
                ) from None
            if not isinstance(data, dict):
                raise IndexError_(
                    f"{url}: answer is not a JSON object", code="index-garbage", retryable=True
                )
            return parse_json_page(cname, url, data)
        text = body.decode("utf-8", "replace")
        if "<a" not in text and "<html" not in text.lower():
            raise IndexError_(
                f"{url}: answer is neither JSON nor HTML", code="index-garbage", retryable=True
            )
        return parse_html_page(cname, url, text)

    def _folder_page(self, folder: Path, cname: str) -> ProjectPage:
        files: list[IndexFile] = []
        for entry in sorted(folder.iterdir()):
            if not entry.is_file():
                continue
            version = _version_of(entry.name, cname)
            if version is None:
                continue
            dist = entry.name.split("-", 1)[0]
            if canonicalize_name(dist) != cname:
                continue
            files.append(
                IndexFile(
                    filename=entry.name,
                    url=entry.resolve().as_uri(),
                    version=version,
                    sha256=_sha256_file(entry),
                    size=entry.stat().st_size,
                    upload_time=None,
                    requires_python=None,
                    yanked=False,
                    has_metadata=False,
                )
            )
        return ProjectPage(cname, tuple(files))

    def _find_links_page(self, link: str, cname: str) -> ProjectPage:
        path = _file_path(link) if link.startswith("file:") else Path(link)
        if path.is_dir():
            return self._folder_page(path, cname)
        return ProjectPage(cname, ())

    # -- metadata ------------------------------------------------------------------
    def core_metadata(self, file: IndexFile) -> str:
        """The METADATA text of one wheel (cached by sha256)."""
        key = file.sha256 or hashlib.sha256(file.url.encode()).hexdigest()
        cache = self.cache_dir / "metadata" / key[:2] / f"{key}.METADATA"
        if file.sha256 and cache.is_file():
            return cache.read_text("utf-8", "replace")
        text: str | None = None
        if file.url.startswith("file:"):
            text = _metadata_from_wheel(_file_path(file.url).read_bytes(), file.filename)
        else:
            try:
                body, _ = _http_get(file.url + ".metadata", limit=MAX_METADATA_BYTES)
                text = body.decode("utf-8", "replace")
            except IndexError_ as exc:
                if exc.code not in ("index-not-found", "index-http-error"):
                    raise
            if text is None:
                body, _ = _http_get(file.url, limit=512 * 1024 * 1024)
                if file.sha256 and hashlib.sha256(body).hexdigest() != file.sha256:
                    raise IndexError_(
                        f"{file.filename}: sha256 does not match the index",
                        code="hash-mismatch",
                        retryable=True,
                    )
                text = _metadata_from_wheel(body, file.filename)
        if file.sha256:
            _atomic_write(cache, text)
        return text


def _metadata_from_wheel(data: bytes, filename: str) -> str:
    import io

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


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _atomic_write(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass  # a cache that cannot be written only costs speed


def default_cache_dir() -> Path:
    env = os.environ.get("AGENTGUARD_CACHE_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "agentguard"
