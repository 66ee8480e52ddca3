"""Index URLs: credentials taken out, and which URLs an index may name.

What is shown or written of a URL is masked by the one redactor (:func:`agentguard.redact.url`);
:func:`clean_url` also takes the login out (it goes to the index, never into a file).
"""

from __future__ import annotations

import functools
import ipaddress
import os
import re
import socket
import urllib.parse
from dataclasses import dataclass

from agentguard import redact


@dataclass(frozen=True)
class Login:
    username: str
    password: str


def split_userinfo(url: str) -> tuple[str, Login | None]:
    """The URL without its userinfo, and the login it carried (if any)."""
    if "@" not in url:  # no userinfo anywhere (a lock's thousands of file URLs)
        return url, None
    # (by hand, not urlsplit: a URL that does not parse, an IPv6 literal left open, still has its
    # login taken off before it is shown or passed on)
    scheme, sep, rest = url.partition("://")
    end = min((i for i in map(rest.find, "/?#") if i >= 0), default=len(rest))
    netloc, tail = rest[:end], rest[end:]  # (the authority ends at `/`, `?` or `#`)
    if not sep or "@" not in netloc:
        return url, None
    info, _, hostport = netloc.rpartition("@")
    user, _, password = info.partition(":")
    login = Login(urllib.parse.unquote(user), urllib.parse.unquote(password))
    return f"{scheme}://{hostport}{tail}", login


def clean_url(url: str) -> str:
    """What may be written or shown of an index URL: no userinfo, secret query values redacted."""
    return redact.url(split_userinfo(url)[0])


Origin = tuple[str, str, int]


def origin(url: str) -> Origin | None:
    """``(scheme, host, port)`` of an http(s) URL; None for anything else, and for a URL
    that does not parse (an IPv6 literal left open, a port that is no number): an index
    page names URLs, and none of them may raise here."""
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    return parts.scheme, parts.hostname.lower(), port or (443 if parts.scheme == "https" else 80)


def configured_hosts() -> frozenset[str]:
    """Extra hosts an index may send agentguard to (``AGENTGUARD_INDEX_HOSTS``, comma or space
    separated): for an index whose files live on another, private, or http host; and an index
    on such a host that a lock names may be read (:mod:`agentguard.lock.configured`)."""
    raw = os.environ.get("AGENTGUARD_INDEX_HOSTS", "")
    return frozenset(h.strip().lower() for h in re.split(r"[,\s]+", raw) if h.strip())


@functools.lru_cache(maxsize=256)
def is_machine_local(host: str) -> bool:
    """``host`` is, or resolves to, this machine or its link (loopback, link-local such as a
    cloud metadata service, unspecified, multicast): never a file CDN. Private ranges are
    not refused: behind a corporate proxy or split DNS a public CDN can resolve to one."""
    try:
        infos = socket.getaddrinfo(host, 443, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return True  # cannot be looked up: cannot be read either
    for info in infos:
        address = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
        if (
            address.is_loopback
            or address.is_link_local
            or address.is_unspecified
            or address.is_multicast
        ):
            return True
    return False


@dataclass(frozen=True)
class UrlPolicy:
    """Which URLs the indexes may name (files, redirects).

    The origin of an index itself (scheme, host, port) always; an https URL of another host
    that is not this machine or its link (an index's file CDN); any host named in
    ``AGENTGUARD_INDEX_HOSTS``. Never ``file:`` or another scheme, never from https down to
    http, never another port of the same host, never an address of this machine or its link."""

    index_origins: frozenset[Origin]
    extra_hosts: frozenset[str] = frozenset()

    def refusal(self, url: str, came_from: str) -> str | None:
        """Why ``url`` (named by, or redirected to from, ``came_from``) is refused, or None."""
        target = origin(url)
        if target is None:
            scheme = url.partition(":")[0] if ":" in url else ""
            if not scheme.isascii() or not scheme.replace("+", "").replace(".", "").isalnum():
                return "names a URL that cannot be read"
            return f"names a {scheme.lower()} URL (only http and https are read)"
        if target in self.index_origins:
            return None
        if target[1] in self.extra_hosts:
            return None
        source = origin(came_from)
        if source is not None and source[0] == "https" and target[0] == "http":
            return "sends agentguard from https to http"
        if target[0] != "https":
            return f"names another host over http ({target[1]}:{target[2]})"
        if is_machine_local(target[1]):
            return f"names a host on this machine or its link ({target[1]})"
        # (a login is found by host, as netrc keys it: another port of an index's host, or of
        # the host that named the URL, would be sent the login of a service it is not)
        hosts = {o[1] for o in self.index_origins} | ({source[1]} if source else set())
        if target[1] in hosts:
            return f"names another port of a host it reads from ({target[1]}:{target[2]})"
        return None
