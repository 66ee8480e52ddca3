"""The key that signs agentguard's caches, and the signed form of a cache file.

A cache folder can be planted (a CI cache a pull request's run wrote, a folder restored
beside the checkout), so a cache whose content could change a verdict is used only when its
HMAC-SHA256 verifies under a key the scanned repository cannot know: ``AGENTGUARD_CACHE_KEY``
(CI: from a secret), else a per-user key file (made on first use, 0600) kept outside every
cache folder and outside the scanned tree. No such key: the cache is not used.

Used by the content cache of a folder scan (:mod:`agentguard.inspect.project.cache`) and by
the resolved fix sets of a lock (:mod:`agentguard.lock.fix_memory`).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import stat
from pathlib import Path

from agentguard import safeio

KEY_ENV = "AGENTGUARD_CACHE_KEY"
KEY_FILE = "cache-key"


def key_folder() -> Path:
    xdg = os.environ.get("XDG_CONFIG_HOME")
    return (Path(xdg) if xdg else Path.home() / ".config") / "agentguard"


def secret(cache_folder: Path, root: str) -> bytes | None:
    """The HMAC key: ``AGENTGUARD_CACHE_KEY`` (CI: from a secret), else the per-user key
    file (made on first use, 0600), never one inside the cache folder or ``root`` (the
    folder under review). None: no key that a later run could share (the cache is then
    not used)."""
    env = os.environ.get(KEY_ENV, "")
    if env:
        return hashlib.sha256(b"agentguard-cache-key\0" + env.encode()).digest()
    folder = key_folder()
    real_cache = os.path.realpath(cache_folder)
    if safeio.inside(folder, real_cache) or safeio.inside(folder, root):
        return None  # (a key restored beside the cache it signs, or the PR's, signs nothing)
    path = folder / KEY_FILE
    try:
        st = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        st = None
    except OSError:
        return None
    if st is not None:
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
            return None  # a link, another's, or readable by others: not a secret
        try:
            key = safeio.read_bytes(path, cap=4096).strip()
        except OSError:
            return None
        return key if len(key) >= 32 else None
    import secrets

    key = secrets.token_hex(32).encode()
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        safeio.write_in(folder, KEY_FILE, key, mode=0o600)
    except OSError:
        return None
    return key


def seal(head: bytes, key: bytes, body: bytes) -> bytes:
    """``head`` (a format line, ending in a newline), the body's MAC, a newline, the body."""
    mac = hmac.new(key, body, hashlib.sha256).hexdigest().encode()
    return head + mac + b"\n" + body


def unseal(blob: bytes, head: bytes, key: bytes) -> bytes | None:
    """The body of a sealed ``blob`` when its format line is ``head`` and its MAC verifies
    under ``key``; None for anything else (another format, tampered, another key)."""
    if not blob.startswith(head):
        return None
    mac, _, body = blob[len(head) :].partition(b"\n")
    want = hmac.new(key, body, hashlib.sha256).hexdigest().encode()
    return body if hmac.compare_digest(mac, want) else None
