"""The trust roots npm signatures and provenance are verified against: bundled with
agentguard as data files (``trust/``, their source and date in ``trust/SOURCES.md``),
never fetched from the registry whose answers they judge (a registry that serves its own
key proves nothing against itself), and never from Sigstore's hosts at run time.

:class:`TrustRoots` is a parameter of every verifier, so that tests inject their own CA
and keys; :func:`bundled` is the production set. Parsing is lazy: ``cryptography`` is
imported only where verification runs."""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib import resources

SIGNATURES, ATTESTATIONS = "npm:signatures", "npm:attestations"


@dataclass(frozen=True)
class NpmKey:
    """One registry key (``keys.json`` of the npm registry, as Sigstore's TUF
    repository distributes it): an ECDSA P-256 public key in PEM."""

    keyid: str
    usage: str  # SIGNATURES | ATTESTATIONS
    pem: bytes
    start: datetime | None
    end: datetime | None  # signatures made after it do not verify

    def valid_at(self, when: datetime) -> bool:
        return (self.start is None or when >= self.start) and (self.end is None or when < self.end)


@dataclass(frozen=True)
class TrustRoots:
    """Fulcio's CA chain (root, intermediate, PEM), Rekor's public keys (PEM) and the npm
    registry's keys."""

    fulcio_root: bytes
    fulcio_intermediate: bytes
    rekor_keys: tuple[bytes, ...]
    npm_keys: tuple[NpmKey, ...]
    origin: str = "bundled"  # said in what the lock records

    def npm_key(self, keyid: str, usage: str) -> NpmKey | None:
        got = [k for k in self.npm_keys if k.keyid == keyid and k.usage == usage]
        return got[0] if len(got) == 1 else None


def parse_time(text: object) -> datetime | None:
    """An RFC 3339 time (``Z`` or an offset); None when it is not one."""
    if not isinstance(text, str) or len(text) > 40:
        return None
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=timezone.utc)


def npm_keys_from(data: object) -> tuple[NpmKey, ...]:
    """``{"keys": [{keyid, usage, start, end, key}]}`` (``trust/npm-registry-keys.json``)."""
    out = []
    for k in data.get("keys", []) if isinstance(data, dict) else []:
        out.append(
            NpmKey(
                str(k["keyid"]),
                str(k["usage"]),
                str(k["key"]).encode(),
                parse_time(k.get("start")),
                parse_time(k.get("end")),
            )
        )
    return tuple(out)


@functools.cache
def bundled() -> TrustRoots:
    """Sigstore's public-good roots and the public npm registry's keys, as shipped."""
    here = resources.files("agentguard.lock.servers").joinpath("trust")
    return TrustRoots(
        fulcio_root=here.joinpath("fulcio-root.pem").read_bytes(),
        fulcio_intermediate=here.joinpath("fulcio-intermediate.pem").read_bytes(),
        rekor_keys=(here.joinpath("rekor.pem").read_bytes(),),
        npm_keys=npm_keys_from(json.loads(here.joinpath("npm-registry-keys.json").read_text())),
    )
