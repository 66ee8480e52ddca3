"""What the resolver said of AG101's fix sets, remembered for the next run
(:mod:`agentguard.lock.fix_check` asks it before running the resolver).

- **A set that resolved**: its solution (pins and hashes), used again only while the index,
  read on this run, still lists every one of those files unyanked.
- **A set that did not resolve**: the digest of every index page the resolver read for it
  (the pages its ``-v`` log names), used again only while each of those pages, read on this
  run, is byte for byte the same. A page that changed (a new release, a yank), a page that
  cannot be read or that the log names on an index this run does not read, and the set
  goes to the resolver again. The answer is as fresh as the resolver's own: uv may answer
  from its HTTP cache for as long as the index allows (ten minutes on the public index), so
  a failure is also kept no longer than :data:`FAILURE_TTL`.

Both kinds are keyed by what the answer depends on (requirements, caps, Python floor, index,
resolver flags, the resolver binary) and sealed with the cache key of
:mod:`agentguard.cache_key`: an entry that does not verify (planted, tampered with, written
under another key) is ignored and the resolver runs, so a cache entry can never change a
verdict that the resolver would not give. No key (see there): nothing is remembered.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from packaging.utils import canonicalize_name

from agentguard import cache_key, safeio
from agentguard.facts.pins import LockedPackage
from agentguard.lock.index import IndexClient, IndexError_
from agentguard.lock.urls import clean_url

FOLDER = "fixsets-v2"
HEAD = b"agentguard-fixset 2\n"
CAP = 4 * 1024 * 1024
FAILURE_TTL = 24 * 3600.0
MAX_PAGES = 2000  # a failure that read more pages than this is not remembered

# uv -v: "Found fresh response for: URL", "No cache entry for: URL", "Sending ... for: URL"
_LOGGED_URL = re.compile(r" for: (https?://\S+)")
_DIST_FILE = re.compile(r"\.(whl|metadata|tar\.gz|zip|tar\.bz2|tgz)(#.*)?$")

Page = tuple[str, str]  # (index URL as shown, canonical project name)


class FixMemory:
    """The remembered answers in ``cache`` (None: none), sealed with the key that is not
    ``root``'s (the project being locked)."""

    def __init__(self, cache: Path | None, root: Path | None) -> None:
        self.cache = cache
        self.root = root
        self._key: bytes | bool | None = False  # False: not looked up yet

    def _secret(self) -> bytes | None:
        if self._key is False:
            self._key = (
                cache_key.secret(self.cache, str(self.root or self.cache))
                if self.cache is not None
                else None
            )
        return self._key if isinstance(self._key, bytes) else None

    def _read(self, key: str) -> dict[str, object] | None:
        secret = self._secret()
        if self.cache is None or secret is None:
            return None
        try:
            blob = safeio.read_bytes(self.cache / FOLDER / f"{key}.json", root=self.cache, cap=CAP)
            body = cache_key.unseal(blob, HEAD, secret)
            data = json.loads(body) if body is not None else None
        except (OSError, ValueError, RecursionError):
            return None
        if not isinstance(data, dict) or data.get("key") != key:
            return None
        return data

    def _write(self, key: str, entry: dict[str, object]) -> None:
        secret = self._secret()
        if self.cache is None or secret is None:
            return
        body = json.dumps({"key": key, **entry}, sort_keys=True).encode()
        with contextlib.suppress(OSError):  # a cache that cannot be written only costs time
            os.makedirs(self.cache / FOLDER, mode=0o700, exist_ok=True)
            safeio.write_in(
                self.cache / FOLDER, f"{key}.json", cache_key.seal(HEAD, secret, body), mode=0o600
            )

    # -- sets that resolved --------------------------------------------------------
    def solution(self, key: str) -> list[LockedPackage] | None:
        data = self._read(key)
        if data is None or data.get("outcome") != "resolves":
            return None
        try:
            pins = [
                LockedPackage(str(p["name"]), str(p["version"]), None, tuple(map(str, p["hashes"])))
                for p in data["pins"]  # type: ignore[attr-defined]
            ]
        except (KeyError, TypeError):
            return None
        return pins or None

    def remember_solution(self, key: str, pins: Iterable[LockedPackage]) -> None:
        self._write(
            key,
            {
                "outcome": "resolves",
                "pins": [
                    {"name": p.name, "version": p.version, "hashes": list(p.hashes)} for p in pins
                ],
            },
        )

    # -- sets that did not resolve -------------------------------------------------
    def failed(self, key: str, client: IndexClient) -> bool:
        """True when this set did not resolve and every page the resolver read for it is,
        read now, the same as then (and the answer is younger than :data:`FAILURE_TTL`)."""
        data = self._read(key)
        if data is None or data.get("outcome") != "unresolvable":
            return False
        try:
            made = float(data["made"])  # type: ignore[arg-type]
            pages = {(str(i), str(n)): str(d) for i, n, d in data["pages"]}  # type: ignore[attr-defined]
        except (KeyError, TypeError, ValueError):
            return False
        if not pages or not 0 <= time.time() - made <= FAILURE_TTL:
            return False
        now = page_digests(client, pages)
        return now is not None and now == pages

    def remember_failure(self, key: str, client: IndexClient, log: Sequence[str]) -> None:
        """Remember that the set did not resolve, under the digests of the pages uv's log
        names (nothing is remembered when one of them is not this run's to read)."""
        pages = logged_pages(log, client)
        if not pages or len(pages) > MAX_PAGES:
            return
        digests = page_digests(client, pages)
        if digests is None:
            return
        entry = [[i, n, d] for (i, n), d in sorted(digests.items())]
        self._write(key, {"outcome": "unresolvable", "made": time.time(), "pages": entry})


def logged_pages(log: Sequence[str], client: IndexClient) -> set[Page] | None:
    """The index pages uv's ``-v`` log says it read, each as (index, name) on one of
    ``client``'s indexes; None when it read a page that is none of those (another index,
    a find-links page) or read from a local folder."""
    if client.find_links:
        return None
    bases = [(clean_url(u), u) for u in client.index_urls]
    if not bases or any(not u.startswith(("http://", "https://")) for _, u in bases):
        return None
    pages: set[Page] = set()
    for line in log:
        for url in _LOGGED_URL.findall(line):
            shown = clean_url(url)
            if _DIST_FILE.search(shown.split("?", 1)[0]):
                continue  # a file the pages list by its hash
            for base, _ in bases:
                rest = shown[len(base) :] if shown.startswith(base) else None
                if rest and rest.endswith("/") and "/" not in rest[:-1]:
                    pages.add((base, canonicalize_name(rest[:-1])))
                    break
            else:
                return None
    return pages


def page_digests(client: IndexClient, pages: Iterable[Page]) -> dict[Page, str] | None:
    """The digest of each page as ``client`` reads it on this run (a page it already read
    is not read again); None when one cannot be read."""
    by_base = {clean_url(u): u for u in client.index_urls}
    wanted = sorted(set(pages))
    names = sorted({n for _, n in wanted})
    failed: list[str] = []

    def read(name: str) -> None:
        try:
            client.project_page(name)
        except IndexError_:
            failed.append(name)

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(read, names))
    if failed:
        return None
    out: dict[Page, str] = {}
    for base, name in wanted:
        url = by_base.get(base)
        digest = client.page_digests.get(f"{url}{name}/") if url is not None else None
        if digest is None:
            return None
        out[(base, name)] = digest
    return out
