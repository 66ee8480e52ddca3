"""A small, read-only client for package indexes: version lists and core metadata.

Reads the simple repository API (:mod:`agentguard.lock.pages`) over http(s)
(:mod:`agentguard.lock.http`) and ``file://``, and flat ``--find-links`` folders; the
``Requires-Dist`` of each wheel comes from :mod:`agentguard.lock.metadata`. Everything an
index sends is data: the URLs it names are read only when the :class:`UrlPolicy` allows
them, a local file only inside a local index or find-links folder the run was given, and
every read is capped and bounded by the run's deadline.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import sys
import threading
import urllib.parse
import urllib.request
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

from packaging.utils import canonicalize_name

from agentguard.lock import metadata, page_cache, page_spans
from agentguard.lock.credentials import Credentials
from agentguard.lock.deadline import NO_DEADLINE, Deadline
from agentguard.lock.pages import (
    MAX_PAGE_BYTES,
    IndexError_,
    IndexFile,
    ProjectPage,
    parse_html_page,
    parse_json_page,
)
from agentguard.lock.pages import _version_of as _version_of
from agentguard.lock.urls import UrlPolicy, clean_url, configured_hosts, origin

if TYPE_CHECKING:
    from agentguard.lock.http import Http

__all__ = [
    "IndexClient",
    "IndexError_",
    "IndexFile",
    "ProjectPage",
    "background_thread",
    "default_cache_dir",
    "parse_html_page",
    "parse_json_page",
]

JSON_ACCEPT = "application/vnd.pypi.simple.v1+json, text/html;q=0.1"
# Pages read ahead while the resolver runs. They are on a re-lock's clock (its analysis
# waits for the last one), and the resolver spends that time on the network too: at 4
# workers the 271 pages of a 272-pin stack took 6.8 s beside a 5 s resolution, at 16 about
# 2.5 s (see docs/benchmarks.md). Bounded by the pool (one connection per worker) and by
# the run's deadline (every read is).
PREFETCH_WORKERS = 16
# ... but each worker opens a connection of its own, and a TLS handshake costs the CPU the
# resolver is using: a small stack's pages are read by fewer (15 pages: 4 workers, 4
# handshakes instead of 15, each page in well before the resolver ends).
PAGES_PER_WORKER = 4
MIN_PREFETCH_WORKERS = 4


def prefetch_workers(pages: int) -> int:
    """How many workers read ``pages`` pages ahead: one per :data:`PAGES_PER_WORKER`, within
    [:data:`MIN_PREFETCH_WORKERS`, :data:`PREFETCH_WORKERS`]."""
    wanted = -(-pages // PAGES_PER_WORKER)
    return max(MIN_PREFETCH_WORKERS, min(PREFETCH_WORKERS, wanted))


def _file_path(url: str) -> Path:
    return Path(urllib.request.url2pathname(urllib.parse.urlparse(url).path))


def read_local(path: Path, limit: int) -> bytes:
    """A regular file, at most ``limit`` bytes (a FIFO or device is refused, never waited on)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise IndexError_(
            f"{path.name}: cannot read ({exc.strerror or exc})", code="read-error", retryable=False
        ) from None
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise IndexError_(
                f"{path.name}: not a regular file", code="read-error", retryable=False
            )
        if st.st_size > limit:
            raise IndexError_(
                f"{path.name}: larger than {limit} bytes", code="index-too-large", retryable=False
            )
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise IndexError_(
            f"{path.name}: larger than {limit} bytes", code="index-too-large", retryable=False
        )
    return data


def background_thread() -> None:
    """Run the calling thread ``BACKGROUND_NICE`` below normal priority, and the threads it
    starts, which inherit it (0: as the process). Linux only: there a thread has its own
    nice value; elsewhere the call would renice a whole process, so nothing is changed."""
    if BACKGROUND_NICE and sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), BACKGROUND_NICE)


# The page readers and the analysis beside the resolver ran at nice +10, so that uv would
# get the CPU first. That only matters when the cores are all busy: uv is mostly waiting on
# the network and agentguard's Python holds one core. On a loaded machine it starved the
# re-lock's own critical path (the last pages, the analysis and the rules, which the report
# waits for once uv is done): at load 13-17 on 2 cores, interleaved runs, 9.8-14.0 s against
# 5.9-10.9 s (88 pins), 13.6-13.9 s against 7.7-10.6 s (272 pins), median 3.7 s against
# 2.7 s (15 pins). A thread cannot lower its nice value again without privilege (to speed
# up the tail once uv is done), so none is set.
BACKGROUND_NICE = 0


class IndexClient:
    """Reads project pages from one or more indexes and find-links folders.

    ``logins`` are further URLs whose userinfo may be the login of an index (the
    ``--index-url`` as given, when the resolver names the index without it)."""

    def __init__(
        self,
        index_urls: Iterable[str],
        find_links: Iterable[str] = (),
        cache_dir: Path | None = None,
        *,
        logins: Iterable[str] = (),
        deadline: Deadline = NO_DEADLINE,
    ) -> None:
        credentials = Credentials(logins)
        self.index_urls_given = tuple(credentials.add(u) for u in index_urls)
        self.index_urls = [u.rstrip("/") + "/" for u in self.index_urls_given]
        self.find_links = list(find_links)
        self.cache = metadata.MetadataCache(cache_dir or default_cache_dir())
        origins = frozenset(o for o in (origin(u) for u in self.index_urls) if o is not None)
        self.policy = UrlPolicy(origins, configured_hosts())
        # made on first use: an offline run (`check`, `lock --check`) reads only the cache
        # and never imports the HTTP client (http.client and ssl; urllib3 too behind a proxy)
        self._http_args = (credentials, self.policy, deadline)
        self._http: Http | None = None
        self._http_lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self._prefetched: dict[str, Future[ProjectPage]] = {}
        # the digest of each index page read (URL -> page_cache.digest): a fix set that did
        # not resolve is remembered by the pages the resolver read (lock.fix_memory)
        self.page_digests: dict[str, str] = {}

    @property
    def http(self) -> Http:
        with self._http_lock:
            if self._http is None:
                from agentguard.lock.http import Http

                self._http = Http(*self._http_args)
            return self._http

    def prefetch(self, names: Iterable[str], workers: int = PREFETCH_WORKERS) -> None:
        """Start reading pages in the background (e.g. while the resolver runs), by
        ``workers`` threads (fixed by the first call: see :func:`prefetch_workers`)."""
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
            # One source (the common case) is taken as it is: merging would group every
            # file of a page up front (pydantic-core: 15k) and drop its version list.
            files = page if not found else files.merge(page)
            found = True
        for link in self.find_links:
            page = self._find_links_page(link, cname)
            if len(page):
                files = page if not found else files.merge(page)
                found = True
        if errors:
            # No index answered, or one answered and another failed (the list may be partial).
            raise errors[0]
        if not found:
            raise IndexError_(f"{cname}: not on any index", code="index-not-found", retryable=False)
        files.warm()
        return files

    def _index_page(self, base: str, cname: str) -> ProjectPage:
        url = f"{base}{cname}/"
        if url.startswith("file:"):
            folder = _file_path(url)
            index_html = folder / "index.html"
            if index_html.is_file():
                text = read_local(index_html, MAX_PAGE_BYTES).decode("utf-8", "replace")
                return parse_html_page(cname, index_html.as_uri(), text)
            if folder.is_dir():
                return self._folder_page(folder, cname)
            raise IndexError_(f"{url}: not found", code="index-not-found", retryable=False)
        body, ctype = self.http.get(url, accept=JSON_ACCEPT)
        shown = clean_url(url)
        key = page_cache.digest(cname, url, body)
        self.page_digests[url] = key
        if "json" in ctype:
            cached = page_cache.load(self.cache.folder, cname, url, body, key)
            if cached is not None:  # this very body, parsed on an earlier run
                return cached
            # (None: parsed below, uncached, as ever; a page too small to be kept needs no
            # places, and the C decoder alone reads it faster: 148 of 271 pages, 25 ms)
            parsed = page_spans.parse(body) if page_cache.keeps(body) else None
            if parsed is not None:
                data, spans = parsed
            else:
                try:
                    data = json.loads(body)
                except (ValueError, RecursionError):  # a hostile page may nest without end
                    raise IndexError_(
                        f"{shown}: answer is not JSON", code="index-garbage", retryable=True
                    ) from None
                spans = None
            if not isinstance(data, dict):
                raise IndexError_(
                    f"{shown}: answer is not a JSON object", code="index-garbage", retryable=True
                )
            page = parse_json_page(cname, url, data)
            if spans is not None:
                page_cache.store(self.cache.folder, cname, url, body, page, spans, key)
            return page
        text = body.decode("utf-8", "replace")
        if "<a" not in text and "<html" not in text.lower():
            raise IndexError_(
                f"{shown}: answer is neither JSON nor HTML", code="index-garbage", retryable=True
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
        """The valid ``Requires-Dist`` lines of one wheel (cached, see :mod:`metadata`).

        A wheel named by a remote page is read only from a URL the policy allows, never
        from a local path; one named by a local index or folder is a capped regular file."""
        remote = origin(file.page_url) is not None
        if file.url.startswith(("http://", "https://")) or remote:
            refusal = self.policy.refusal(file.url, file.page_url or file.url)
            if refusal is not None:
                raise IndexError_(
                    f"{file.filename}: not read: the index {refusal}; allow a trusted host "
                    "with AGENTGUARD_INDEX_HOSTS",
                    code="index-bad-url",
                    retryable=False,
                )
        return metadata.requires_dist(file, self.cache, self._fetch, _read_local_url)

    def _fetch(self, url: str, limit: int) -> bytes:
        return self.http.get(url, limit=limit)[0]

    def read_file(self, file: IndexFile, limit: int) -> bytes:
        """The bytes of one file a page lists, capped: through the same URL policy and
        deadline as every other read, or from a local find-links folder (a regular file)."""
        if file.url.startswith("file:"):
            return _read_local_url(file.url, limit)
        return self._fetch(file.url, limit)

    @property
    def cache_folder(self) -> Path:
        return self.cache.folder


def _read_local_url(url: str, limit: int) -> bytes:
    return read_local(_file_path(url), limit)


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def default_cache_dir() -> Path:
    env = os.environ.get("AGENTGUARD_CACHE_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "agentguard"
