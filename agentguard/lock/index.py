"""A small, read-only client for package indexes: version lists and core metadata.

Speaks the simple repository API (PEP 691 JSON, PEP 503 HTML) over http(s) and
``file://``, and reads flat ``--find-links`` folders. Core metadata comes from the
PEP 658 ``.metadata`` file when the index serves one, else from the wheel itself.
Metadata is cached on disk by the wheel's sha256 (immutable), so a warm re-lock
needs no metadata download at all.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import http.client
import json
import os
import re
import socket
import ssl
import sys
import threading
import urllib.error
import urllib.parse
import urllib.request
import zipfile
import zlib
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from packaging.metadata import parse_email
from packaging.requirements import InvalidRequirement, Requirement
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
MAX_ERROR_BODY_BYTES = 64 * 1024
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
        if items is not None:
            self._raw = None  # grouped on demand
        for f in files:
            self._grouped().setdefault(str(f.version), []).append(functools.partial(_same, f))
            if not f.yanked:
                self._yanked_only.discard(str(f.version))

    def _grouped(self) -> dict[str, list[Callable[[], IndexFile | None]]]:
        if self._raw is None:
            raw: dict[str, list[Callable[[], IndexFile | None]]] = {}
            not_yanked: set[str] = set()
            for item in self._items or []:
                filename = item.get("filename")
                vtext = _version_text(filename) if isinstance(filename, str) else None
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

    def released_versions(self) -> list[Version]:
        """Versions with at least one non-yanked file, pre-releases excluded."""
        if self._raw is None and self._versions_hint is not None:
            # PyPI yanks whole releases: a version is out when every file of it is yanked.
            yanked = {
                _version_text(str(i.get("filename", "")))
                for i in self._items or []
                if i.get("yanked")
            }
            if yanked:
                alive = {
                    _version_text(str(i.get("filename", "")))
                    for i in self._items or []
                    if not i.get("yanked") and _version_text(str(i.get("filename", ""))) in yanked
                }
                yanked -= alive
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

    def files_for(self, version: Version) -> list[IndexFile]:
        if self._raw is None:
            out: list[IndexFile] = []
            for item in self._items or []:
                filename = item.get("filename")
                vtext = _version_text(filename) if isinstance(filename, str) else None
                if vtext is not None and _parse_version(vtext) == version:
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
    return IndexFile(
        filename=filename,
        url=_absolute(page_url, str(item.get("url", ""))),
        version=version,
        sha256=str(hashes["sha256"]).lower() if "sha256" in hashes else None,
        size=size if isinstance(size, int) else None,
        upload_time=str(item["upload-time"]) if item.get("upload-time") else None,
        requires_python=str(item["requires-python"]) if item.get("requires-python") else None,
        yanked=bool(item.get("yanked")),
        has_metadata=bool(meta),
    )


def _absolute(base: str, url: str) -> str:
    return (
        url if url.startswith(("https://", "http://", "file:")) else urllib.parse.urljoin(base, url)
    )


def _file_path(url: str) -> Path:
    return Path(urllib.request.url2pathname(urllib.parse.urlparse(url).path))


_SSL_CONTEXT: ssl.SSLContext | None = None
_SSL_LOCK = threading.Lock()
_DNS: dict[tuple[str, int], tuple[str, int]] = {}
_DNS_LOCKS: dict[tuple[str, int], threading.Lock] = {}
_LOCAL = threading.local()
MAX_REDIRECTS = 5


def _ssl_context() -> ssl.SSLContext:
    """One context for every request: building one costs ~40 ms of CPU (loading CA certs)."""
    global _SSL_CONTEXT
    with _SSL_LOCK:
        if _SSL_CONTEXT is None:
            cafile = os.environ.get("SSL_CERT_FILE") or os.environ.get("PIP_CERT") or None
            _SSL_CONTEXT = ssl.create_default_context(
                cafile=cafile if cafile and os.path.isfile(cafile) else None
            )
        return _SSL_CONTEXT


def _resolve(host: str, port: int) -> tuple[str, int]:
    """Resolve each host once per process: a burst of parallel look-ups can hit a resolver's
    rate limit (seen here: 5 s stalls), and the answer does not change within one run."""
    key = (host, port)
    with _SSL_LOCK:
        lock = _DNS_LOCKS.setdefault(key, threading.Lock())
    with lock:
        if key not in _DNS:
            info = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            host_addr, port_addr = info[0][4][0], info[0][4][1]
            _DNS[key] = (str(host_addr), int(port_addr))
        return _DNS[key]


class _Connection(http.client.HTTPSConnection):
    """Keep-alive HTTP(S) connection that connects to the cached address of its host."""

    def __init__(self, scheme: str, host: str, port: int) -> None:
        super().__init__(host, port, timeout=TIMEOUT, context=_ssl_context())
        self.scheme = scheme

    def connect(self) -> None:
        self.sock = socket.create_connection(_resolve(self.host, self.port), self.timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self.scheme == "https":
            self.sock = _ssl_context().wrap_socket(self.sock, server_hostname=self.host)


def _connection(scheme: str, host: str, port: int, fresh: bool = False) -> _Connection:
    pool: dict[tuple[str, str, int], _Connection] = getattr(_LOCAL, "pool", None) or {}
    _LOCAL.pool = pool
    key = (scheme, host, port)
    if fresh and key in pool:
        pool.pop(key).close()
    if key not in pool:
        pool[key] = _Connection(scheme, host, port)
    return pool[key]


def _http_get(
    url: str, accept: str | None = None, limit: int = MAX_PAGE_BYTES
) -> tuple[bytes, str]:
    if urllib.request.getproxies():
        return _urllib_get(url, accept, limit)
    headers = {"User-Agent": USER_AGENT, "Accept-Encoding": "identity"}
    if accept:
        headers["Accept"] = accept
    for _ in range(MAX_REDIRECTS + 1):
        parts = urllib.parse.urlsplit(url)
        scheme = parts.scheme
        if scheme not in ("http", "https") or not parts.hostname:
            raise IndexError_(f"{url}: unsupported URL", code="index-bad-url", retryable=False)
        port = parts.port or (443 if scheme == "https" else 80)
        path = parts.path or "/"
        if parts.query:
            path += "?" + parts.query
        for attempt in (0, 1):
            conn = _connection(scheme, parts.hostname, port, fresh=attempt == 1)
            try:
                conn.request("GET", path, headers=headers)
                resp = conn.getresponse()
                status = resp.status
                location = resp.getheader("Location")
                ctype = resp.getheader("Content-Type", "")
                # An error page is never needed whole (a hostile one may never end).
                body = resp.read(limit + 1 if status < 300 else MAX_ERROR_BODY_BYTES)
                if resp.will_close or not resp.isclosed():  # unread bytes: never reuse
                    _connection(scheme, parts.hostname, port, fresh=True)
                break
            except (
                http.client.RemoteDisconnected,
                ConnectionResetError,
                BrokenPipeError,
                http.client.CannotSendRequest,
                http.client.BadStatusLine,
            ) as exc:
                if attempt == 1:
                    raise IndexError_(
                        f"{url}: connection failed ({exc})",
                        code="index-unreachable",
                        retryable=True,
                    ) from None
            except (OSError, http.client.HTTPException) as exc:
                _connection(scheme, parts.hostname, port, fresh=True)
                raise IndexError_(
                    f"{url}: unreachable ({exc})", code="index-unreachable", retryable=True
                ) from None
        if status in (301, 302, 303, 307, 308) and location:
            url = urllib.parse.urljoin(url, location)
            continue
        if status == 404:
            raise IndexError_(f"{url}: not found (404)", code="index-not-found", retryable=False)
        if status >= 400:
            raise IndexError_(
                f"{url}: HTTP {status}",
                code="index-http-error",
                retryable=status >= 500 or status == 429,
            )
        if len(body) > limit:
            raise IndexError_(
                f"{url}: answer larger than {limit} bytes", code="index-too-large", retryable=False
            )
        return body, ctype
    raise IndexError_(
        f"{url}: more than {MAX_REDIRECTS} redirects", code="index-http-error", retryable=False
    )


def _urllib_get(url: str, accept: str | None, limit: int) -> tuple[bytes, str]:
    """Through urllib, which honours proxy settings."""
    headers = {"User-Agent": USER_AGENT}
    if accept:
        headers["Accept"] = accept
    req = urllib.request.Request(url, headers=headers)
    try:
        ctx = _ssl_context() if url.startswith("https:") else None
        with urllib.request.urlopen(req, timeout=TIMEOUT, context=ctx) as resp:
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


def background_thread() -> None:
    """Run the calling thread below normal priority (``nice`` +10), and the threads it
    starts, which inherit it. Linux only: there a thread has its own nice value; elsewhere
    the call would renice a whole process, so nothing is changed."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), BACKGROUND_NICE)


BACKGROUND_NICE = 10


class IndexClient:
    """Reads project pages from one or more indexes and find-links folders."""

    def __init__(
        self,
        index_urls: Iterable[str],
        find_links: Iterable[str] = (),
        cache_dir: Path | None = None,
    ) -> None:
        self.index_urls_given = tuple(index_urls)
        self.index_urls = [u.rstrip("/") + "/" for u in self.index_urls_given]
        self.find_links = list(find_links)
        self.cache_dir = cache_dir or default_cache_dir()
        self._pool: ThreadPoolExecutor | None = None
        self._prefetched: dict[str, Future[ProjectPage]] = {}

    def prefetch(self, names: Iterable[str], workers: int = 4) -> None:
        """Start reading pages in the background (e.g. while the resolver runs). Few
        workers: more connections only slow the resolver's own requests to the index;
        and below normal priority, so that the resolver gets the CPU first."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(workers, initializer=background_thread)
        for name in names:
            cname = canonicalize_name(name)
            if cname not in self._prefetched:
                self._prefetched[cname] = self._pool.submit(self._read_page, cname)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)

    # -- project pages -------------------------------------------------------------
    def project_page(self, name: str) -> ProjectPage:
        cname = canonicalize_name(name)
        future = self._prefetched.get(cname)
        if future is not None:
            return future.result()
        return self._read_page(cname)

    def _read_page(self, cname: str) -> ProjectPage:
        files = ProjectPage(cname)
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
            files = files.merge(page)
        for link in self.find_links:
            page = self._find_links_page(link, cname)
            if len(page):
                found = True
                files = files.merge(page)
        if errors and not found:
            raise errors[0]
        if errors:
            # One index answered, another failed: the version list may be partial.
            raise errors[0]
        if not found:
            raise IndexError_(f"{cname}: not on any index", code="index-not-found", retryable=False)
        return files

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
            except (ValueError, RecursionError):  # a hostile page may nest without end
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
    def requires_dist(self, file: IndexFile) -> list[str]:
        """The valid ``Requires-Dist`` lines of one wheel (parsed once, cached as JSON)."""
        cache = None
        if file.sha256:
            cache = self.cache_dir / "requires" / file.sha256[:2] / f"{file.sha256}.json"
            try:
                cached = json.loads(cache.read_text("utf-8"))
                if isinstance(cached, list) and all(isinstance(x, str) for x in cached):
                    return cached
            except (OSError, ValueError):
                pass
        raw, _unparsed = parse_email(self.core_metadata(file))
        out: list[str] = []
        for line in raw.get("requires_dist", []) or []:
            try:
                Requirement(line)
            except InvalidRequirement:
                continue
            out.append(line)
        if cache is not None:
            _atomic_write(cache, json.dumps(out))
        return out

    def core_metadata(self, file: IndexFile) -> str:
        """The METADATA text of one wheel (cached by sha256)."""
        key = file.sha256 or hashlib.sha256(file.url.encode()).hexdigest()
        cache = self.cache_dir / "metadata" / key[:2] / f"{key}.METADATA"
        if file.sha256 and cache.is_file():
            return cache.read_text("utf-8", "replace")
        text: str | None = None
        if file.url.startswith("file:"):
            try:
                data = _file_path(file.url).read_bytes()
            except OSError as exc:
                raise IndexError_(
                    f"{file.filename}: cannot read ({exc.strerror or exc})",
                    code="read-error",
                    retryable=False,
                ) from None
            text = _metadata_from_wheel(data, file.filename)
        else:
            try:
                body, _ = _http_get(file.url + ".metadata", limit=MAX_METADATA_BYTES)
                text = body.decode("utf-8", "replace")
            except IndexError_ as exc:
                if exc.code not in ("index-not-found", "index-http-error"):
                    raise
            if text is not None and not _describes(text, file):
                text = None  # not this wheel's metadata: read the (hash-checked) wheel instead
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


def _describes(text: str, file: IndexFile) -> bool:
    """Whether a served metadata file is about this wheel (Name and Version match); an
    answer that is not (an error page, garbage) must never read as "no requirements"."""
    try:
        raw, _ = parse_email(text)
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
    except (NotImplementedError, RuntimeError, EOFError, ValueError, zlib.error) as exc:
        # unsupported compression, encrypted members, a stream cut short
        raise IndexError_(
            f"{filename}: METADATA cannot be read ({exc})", code="bad-wheel", retryable=False
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
