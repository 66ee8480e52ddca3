"""The indexes agentguard may contact: the ones configured on the user's side, never one
that a file under review names.

A lock file (the ``# index-urls:`` header of requirements.lock, the registry of each package
in uv.lock, poetry.lock or pylock.toml) is content of the pull request being checked; so is
the project's pyproject.toml, its ``[tool.agentguard]`` table included (a pull request can
edit both in one commit). So the indexes come from the runner's side only:

- ``--index-url`` on the command line;
- uv's and pip's own environment: ``UV_DEFAULT_INDEX`` / ``UV_INDEX_URL`` / ``PIP_INDEX_URL``
  for the default index, ``UV_INDEX`` / ``UV_EXTRA_INDEX_URL`` / ``PIP_EXTRA_INDEX_URL`` for
  more (the resolver reads the same variables);
- otherwise the resolver's own default (asked from uv once, kept in the cache);
- and any index on a host listed in ``AGENTGUARD_INDEX_HOSTS``.

An index a file names that is none of these is a source skipped with the reason, not
contacted. A local (``file:``) index is a folder, not a host: it is read as before.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass

from agentguard import redact, safeio
from agentguard.findings import Source
from agentguard.lock.urls import clean_url, configured_hosts, origin

_DEFAULT_ENV = {
    "uv": ("UV_DEFAULT_INDEX", "UV_INDEX_URL"),
    "pip-tools": ("PIP_INDEX_URL",),
}
_EXTRA_ENV = {
    "uv": ("UV_INDEX", "UV_EXTRA_INDEX_URL"),
    "pip-tools": ("PIP_EXTRA_INDEX_URL",),
}
_CACHED = "default-index-v1.json"
_CACHE_CAP = 64 * 1024
HOW = "pass it with --index-url, set UV_INDEX or PIP_INDEX_URL, or list its host in AGENTGUARD_INDEX_HOSTS"


def key(url: str) -> str:
    """An index URL as compared: no login, masked the one way (a ``***`` an older agentguard
    wrote reads as the mask), no trailing slash, scheme and host in lower case."""
    shown = clean_url(url.strip()).replace("://***@", f"://{redact.MASK}@")
    shown = re.sub(r"=\*\*\*(?=[&#]|$)", f"={redact.MASK}", shown)
    shown, q, query = shown.partition("?")
    scheme, sep, rest = shown.partition("://")
    host, slash, path = rest.partition("/")
    if sep:
        shown = f"{scheme.lower()}{sep}{host.lower()}{slash}{path}"
    return shown.rstrip("/") + q + query


def _env_urls(names: Iterable[str]) -> list[str]:
    out: list[str] = []
    for name in names:
        for word in os.environ.get(name, "").split():
            # UV_INDEX entries may be named: ``internal=https://host/simple``
            head, eq, tail = word.partition("=")
            out.append(tail if eq and "://" not in head and "://" in tail else word)
    return out


@dataclass(frozen=True)
class Configured:
    """The indexes of this run, as the user configured them."""

    urls: tuple[str, ...]  # as given (a login stays: agentguard's own client sends it)
    hosts: frozenset[str] = frozenset()  # AGENTGUARD_INDEX_HOSTS

    def allows(self, url: str) -> bool:
        """Whether agentguard may read the index (or a file) at ``url``."""
        if url.startswith("file:"):
            return True
        if key(url) in {key(u) for u in self.urls}:
            return True
        target = origin(url)
        return target is not None and target[1] in self.hosts

    def allows_file(self, url: str) -> bool:
        """Whether a file URL a lock names lies on a configured index's own origin (or a
        listed host): then it is read as named; otherwise it is looked up on the index."""
        if url.startswith("file:"):
            return True
        target = origin(url)
        if target is None:
            return False
        return target[1] in self.hosts or target in {origin(u) for u in self.urls}

    def skipped(self, named: Iterable[str], where: str) -> list[Source]:
        """A skipped source for each index ``where`` names that is not configured."""
        out: list[Source] = []
        seen: set[str] = set()
        for url in named:
            if self.allows(url) or key(url) in seen:
                continue
            seen.add(key(url))
            out.append(
                Source.skipped(
                    "index",
                    clean_url(url),
                    f"named by {where}, not an index configured for this run: not contacted "
                    f"(to read it, {HOW})",
                )
            )
        return out


def configured(index_url: str | None = None, backend: str = "uv") -> Configured:
    """The indexes from the user's side (see the module's docstring)."""
    defaults = [index_url] if index_url else _env_urls(_DEFAULT_ENV.get(backend, ()))[:1]
    extras = _env_urls(_EXTRA_ENV.get(backend, ()))
    if not defaults:
        defaults = list(resolver_default())
    return Configured(tuple(dict.fromkeys([*defaults, *extras])), configured_hosts())


def resolver_default() -> tuple[str, ...]:
    """The index uv uses when none is configured (asked once per uv binary and environment,
    then cached: spawning uv costs a tenth of a second of a re-lock)."""
    from agentguard.errors import UsageError
    from agentguard.lock.backend import uv_binary

    try:
        binary = uv_binary()
        st = os.stat(binary)
    except (OSError, UsageError):
        return ()  # no uv: the resolver says so itself
    env = [os.environ.get(n, "") for n in (*_DEFAULT_ENV["uv"], *_EXTRA_ENV["uv"])]
    from agentguard.lock.backend import ResolverError

    try:
        return _resolver_default("\n".join([binary, str(st.st_size), str(st.st_mtime_ns), *env]))
    except (ResolverError, OSError):  # (asked again next time: a failure is never cached)
        return ()


@functools.lru_cache(maxsize=8)
def _resolver_default(stamp: str) -> tuple[str, ...]:
    from agentguard.lock.backend import default_index_urls
    from agentguard.lock.index import default_cache_dir

    cache = default_cache_dir()
    try:
        cached = json.loads(safeio.read_text(cache / _CACHED, root=cache, cap=_CACHE_CAP))
        if cached.get("uv") == stamp and all(isinstance(u, str) for u in cached["urls"]):
            return tuple(cached["urls"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    urls = default_index_urls()  # (ResolverError, OSError: to the caller, not cached)
    with contextlib.suppress(OSError):  # a cache that cannot be written only costs speed
        safeio.write_in(cache, _CACHED, json.dumps({"uv": stamp, "urls": list(urls)}))
    return urls
