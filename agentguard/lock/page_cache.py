"""Index pages parsed once per content: a JSON page read again, byte for byte the same, is
not parsed again.

A re-lock reads every locked package's page from the index (the index is the truth, and
its pages carry no validators to ask "changed?"), and parsing them was most of its own
CPU: the 271 pages of a 272-pin stack are 54 MB of JSON (pydantic-core alone 7 MB), and
a lock needs the files of a few versions of each. So for a page's exact bytes an entry
keeps where each version's files stand in those bytes (:mod:`agentguard.lock.page_spans`
finds them while parsing the page, at no extra cost), keyed by the SHA-256 of the page's
own bytes (with its URL and name, which its links and versions are read against): a key
names exactly one body, so an entry can never describe another state of the index; an
index change is a new body, a new key, a full parse. On a hit only the entry's head is
read (versions, which are all yanked, where each version's files are); the files of a
version are decoded from the page's own bytes when something asks for them. (Entries
held the files themselves until version 3: reading and checking 54 MB of entries cost
0.1 s of CPU per re-lock, beside the resolver.)

One entry per page URL is kept (storing a new body removes the old one). File names are
hex digests made here. The cache is the user's (``AGENTGUARD_CACHE_DIR``), never the
scanned repository's; an entry that does not read back as written is ignored. A key names
a body anyone can fetch, so anyone who can write the folder could plant an entry under it
that lists other versions or other places: each entry is sealed (HMAC-SHA256 under the
cache key of :mod:`agentguard.cache_key`) and one that does not verify is ignored (the
page is parsed); places that do not decode to the files of their version (which only a
sealed entry of another body could give) send the page to a full parse. A page that is not
ASCII is parsed every time. No key: no cache.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import hmac
import json
from pathlib import Path
from typing import Any

from packaging.version import Version

from agentguard import cache_key, safeio
from agentguard.lock.pages import ProjectPage, _parse_version, item_version_text, parse_json_page

FOLDER = "pages-v3"
HEAD = b"agentguard-page 3\n"
_MAC = 64  # hex digits of the entry's HMAC-SHA256
MIN_BYTES = 64 * 1024  # smaller pages parse faster than a cache file is read
MAX_BYTES = 64 * 1024 * 1024  # an entry holds places, not files: far under its page


def keeps(body: bytes) -> bool:
    """Whether a page of this size is kept (parsed, it is stored; read again, looked up)."""
    return len(body) >= MIN_BYTES


def digest(name: str, url: str, body: bytes) -> str:
    """The SHA-256 of a page's bytes with its URL and name: the key of its entry, and what
    :mod:`agentguard.lock.fix_memory` compares to tell that a page is the same."""
    h = hashlib.sha256(b"%s\n%s\n" % (url.encode(), name.encode()))
    h.update(body)  # (not joined to the head first: a copy of every page, 30 ms on 54 MB)
    return h.hexdigest()


def _names(cache: Path, name: str, url: str, body: bytes, key: str | None) -> tuple[Path, str, str]:
    where = hashlib.sha256(f"{url}\n{name}".encode()).hexdigest()[:32]
    return cache / FOLDER / where[:2], where, key or digest(name, url, body)


def load(
    cache: Path, name: str, url: str, body: bytes, key: str | None = None
) -> ProjectPage | None:
    """The page stored for exactly this body (``key``: its :func:`digest`, when known), or
    None."""
    if not keeps(body):
        return None
    secret = _secret(cache)
    if secret is None:
        return None
    folder, where, key = _names(cache, name, url, body, key)
    try:
        data = safeio.read_bytes(folder / f"{where}-{key}", root=cache, cap=MAX_BYTES)
        start = len(HEAD) + _MAC + 1
        if not data.startswith(HEAD) or data[start - 1 : start] != b"\n":
            return None
        sealed = memoryview(data)[start:]
        want = hmac.new(secret, sealed, hashlib.sha256).hexdigest().encode()
        if not hmac.compare_digest(data[len(HEAD) : start - 1], want):
            return None
        head = json.loads(data[start:])
        if head.get("key") != key or head.get("name") != name or head.get("url") != url:
            return None
        return CachedPage(name, url, head, body)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def store(
    cache: Path,
    name: str,
    url: str,
    body: bytes,
    page: ProjectPage,
    spans: list[tuple[int, int]],
    key: str | None = None,
) -> None:
    """Keep where the files of ``page`` (parsed from ``body``; ``spans``: where each element
    of its file list stands in ``body``) are, for the next read of the same body."""
    if not keeps(body) or page.raw_items is None:
        return
    secret = _secret(cache)
    if secret is None:
        return
    objects = [span for span in spans if body[span[0] : span[0] + 1] == b"{"]
    if len(objects) != len(page.raw_items):  # (the items are the list's objects, in order)
        return
    folder, where, key = _names(cache, name, url, body, key)
    ranges: dict[str, list[int]] = {}
    for item, (begin, end) in zip(page.raw_items, objects, strict=True):
        vtext = item_version_text(item)
        if vtext is not None:
            ranges.setdefault(vtext, []).extend((begin, end))
    head = {
        "key": key,
        "name": name,
        "url": url,
        "count": len(page),
        "hint": page.versions_hint,
        "yanked": sorted(page.yanked_versions()),
        "ranges": ranges,
    }
    sealed = json.dumps(head, separators=(",", ":")).encode() + b"\n"
    mac = hmac.new(secret, sealed, hashlib.sha256).hexdigest().encode()
    data = HEAD + mac + b"\n" + sealed
    with contextlib.suppress(OSError):  # a cache that cannot be written only costs time
        for old in folder.glob(f"{where}-*") if folder.is_dir() else ():
            safeio.remove_in(cache / FOLDER, f"{where[:2]}/{old.name}")  # (never via a link)
        # (the user's alone, as the fix sets: its head names the page's URL, which may carry
        # an index's token in its path)
        safeio.write_in(cache / FOLDER, f"{where[:2]}/{where}-{key}", data, mode=0o600)


@functools.lru_cache(maxsize=8)
def _secret(cache: Path) -> bytes | None:
    """The key that seals this cache folder's entries (read once per process)."""
    return cache_key.secret(cache, str(cache))


class CachedPage(ProjectPage):
    """A JSON page read back from the cache: each version's files decoded, on first use,
    from the places the entry gives in the page's own bytes."""

    def __init__(self, name: str, url: str, head: dict[str, Any], body: bytes) -> None:
        hint = head["hint"]
        super().__init__(
            name,
            items=[],
            page_url=url,
            versions_hint=[str(v) for v in hint] if isinstance(hint, list) else None,
        )
        self._count = int(head["count"])
        self._yanked_texts = {str(v) for v in head["yanked"]}
        self._ranges: dict[str, Any] = dict(head["ranges"])  # (checked when decoded)
        self._body = body
        self._texts: dict[Version, list[str]] = {}
        for vtext in self._ranges:
            v = _parse_version(vtext)
            if v is not None:
                self._texts.setdefault(v, []).append(vtext)
        self._decoded: dict[Version, list[dict[str, Any]]] = {}
        self._whole: ProjectPage | None = None
        self._all: list[dict[str, Any]] | None = None

    def __len__(self) -> int:
        return self._count

    def yanked_versions(self) -> set[str]:
        return set(self._yanked_texts)

    def _items_for(self, version: Version) -> list[dict[str, Any]]:
        items = self._decoded.get(version)
        if items is None:
            items = self._decode(self._texts.get(version, []))
            if items is None:  # (places that do not give their files are never believed)
                items = self._parsed_whole()._items_for(version)
            self._decoded[version] = items
        return items

    def _decode(self, vtexts: list[str]) -> list[dict[str, Any]] | None:
        """The files of the version texts ``vtexts`` decoded from their places, in the
        page's order (as a fresh parse lists them: a version spelled two ways, ``1.0`` and
        ``1.0.0``, has its files interleaved); None when the places do not give them."""
        placed: list[tuple[int, int, str]] = []
        for vtext in vtexts:
            pairs = self._ranges[vtext]
            if not isinstance(pairs, list) or not all(type(n) is int for n in pairs):
                return None
            placed.extend((pairs[i], pairs[i + 1], vtext) for i in range(0, len(pairs) - 1, 2))
        if not placed:
            return []
        placed.sort()
        view = memoryview(self._body)
        got: object = None
        with contextlib.suppress(ValueError, RecursionError):
            got = json.loads(b"[" + b",".join(view[a:b] for a, b, _ in placed) + b"]")
        if (
            isinstance(got, list)
            and len(got) == len(placed)
            and all(
                isinstance(i, dict) and item_version_text(i) == p[2]
                for i, p in zip(got, placed, strict=True)
            )
        ):
            return got
        return None

    def _parsed_whole(self) -> ProjectPage:
        """The page from a full parse of its bytes."""
        if self._whole is None:
            data = json.loads(self._body)
            self._whole = parse_json_page(self.name, self._page_url, data)
        return self._whole

    @property
    def raw_items(self) -> list[dict[str, Any]]:
        """The files of every version, in the page's order (decoded at once)."""
        if self._all is None:
            texts = [t for ts in self._texts.values() for t in ts]
            got = self._decode(texts)
            self._all = got if got is not None else list(self._parsed_whole().raw_items or [])
        return self._all

    def warm(self) -> None:
        released = self.released_versions()
        released.groups()
        released.keys()
