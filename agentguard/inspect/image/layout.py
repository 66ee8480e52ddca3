"""Saved-image layouts and platform selection.

Two layouts: ``docker save``'s classic ``manifest.json`` (``<id>/layer.tar`` + ``<config>.json``,
or ``blobs/sha256/...`` paths from newer engines) and the OCI image layout (``index.json`` +
``blobs/<alg>/<hex>``, possibly nested indexes). When both are present, ``index.json`` wins: it
carries media types, digests and platforms. Manifests, indexes and configs are always digest
checked. Two images matching one platform are never resolved by taking the first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Protocol

from agentguard.inspect.image.imageconfig import load_json, parse_digest, platform_of, verify
from agentguard.inspect.image.limits import Limits, ReadFailure, cap_hit
from agentguard.inspect.image.tarwalk import normalise

INDEX_TYPES = frozenset(
    {
        "application/vnd.oci.image.index.v1+json",
        "application/vnd.docker.distribution.manifest.list.v2+json",
    }
)
_BLOB_PATH = re.compile(r"^blobs/([a-z0-9]+)/([a-f0-9]{32,128})$")
_CONFIG_NAME = re.compile(r"^([a-f0-9]{64})\.json$")
_ARCH_ALIASES = {"x86_64": "amd64", "x86-64": "amd64", "aarch64": "arm64", "armhf": "arm"}


class SmallBlobs(Protocol):
    def has(self, name: str) -> bool: ...

    def read_small(self, name: str, limit: int) -> bytes: ...


@dataclass(frozen=True)
class LayerRef:
    path: str  # member of the archive (or file of the folder)
    blob_digest: str | None  # digest of the bytes as stored, when the layout gives one
    media_type: str | None


@dataclass(frozen=True)
class Candidate:
    label: str  # a tag or name when known, else the manifest digest or config path
    platform: str | None
    config_path: str | None = None
    config_digest: str | None = None
    layers: tuple[LayerRef, ...] = ()
    manifest_digest: str | None = None
    repo_tags: tuple[str, ...] = ()
    error: ReadFailure | None = None  # its manifest (or config) could not be read

    def describe(self) -> str:
        return f"{self.label} ({self.platform or 'platform unknown'})"


def blob_path(digest: Any) -> str:
    if not isinstance(digest, str):
        raise ReadFailure("invalid-manifest", f"a descriptor without a digest: {digest!r}")
    algorithm, hexpart = parse_digest(digest)
    return f"blobs/{algorithm}/{hexpart}"


def digest_from_path(path: str) -> str | None:
    m = _BLOB_PATH.match(path)
    if m:
        return f"{m.group(1)}:{m.group(2)}"
    m = _CONFIG_NAME.match(path)
    return f"sha256:{m.group(1)}" if m else None


def find_candidates(blobs: SmallBlobs, limits: Limits) -> tuple[str, list[Candidate]]:
    """The layout's name and every image it holds (attestation manifests left out)."""
    if blobs.has("index.json"):
        index = load_json(blobs.read_small("index.json", limits.max_json_bytes), "index.json")
        out: list[Candidate] = []
        _walk_index(blobs, limits, index, 0, None, out)
        return "oci", out
    if blobs.has("manifest.json"):
        doc = load_json(blobs.read_small("manifest.json", limits.max_json_bytes), "manifest.json")
        if not isinstance(doc, list):
            raise ReadFailure("invalid-manifest", "manifest.json is not a list")
        return "docker-save", [_docker_candidate(blobs, limits, e) for e in doc]
    raise ReadFailure(
        "layout-unknown",
        "neither index.json nor manifest.json found: not a docker save tarball or OCI layout",
    )


def read_json_blob(blobs: SmallBlobs, limits: Limits, digest: Any, what: str) -> Any:
    path = blob_path(digest)
    if not blobs.has(path):
        raise ReadFailure("blob-missing", f"{what} {digest} is not in the archive")
    data = blobs.read_small(path, limits.max_json_bytes)
    verify(data, digest, what)
    return load_json(data, what)


def _walk_index(
    blobs: SmallBlobs,
    limits: Limits,
    index: Any,
    depth: int,
    name: str | None,
    out: list[Candidate],
) -> None:
    manifests = index.get("manifests") if isinstance(index, dict) else None
    if not isinstance(manifests, list):
        raise ReadFailure("invalid-index", "an OCI index without a 'manifests' list")
    for desc in manifests:
        if not isinstance(desc, dict):
            continue
        ann = desc.get("annotations")
        if not isinstance(ann, dict):
            ann = {}
        if ann.get("vnd.docker.reference.type") == "attestation-manifest":
            continue
        platform = _desc_platform(desc.get("platform"))
        if platform == "unknown/unknown":
            continue
        ref = ann.get("io.containerd.image.name") or ann.get("org.opencontainers.image.ref.name")
        label = str(ref) if ref else name
        digest = desc.get("digest")
        try:
            doc = read_json_blob(blobs, limits, digest, "manifest")
        except ReadFailure as exc:
            out.append(
                Candidate(label or str(digest), platform, manifest_digest=_s(digest), error=exc)
            )
            continue
        if desc.get("mediaType") in INDEX_TYPES or (isinstance(doc, dict) and "manifests" in doc):
            if depth + 1 > limits.max_index_depth:
                raise cap_hit(
                    "index-depth", f"OCI indexes nested deeper than {limits.max_index_depth}"
                )
            _walk_index(blobs, limits, doc, depth + 1, label, out)
            continue
        out.append(_oci_candidate(blobs, limits, doc, str(digest), platform, label))


def _oci_candidate(
    blobs: SmallBlobs,
    limits: Limits,
    manifest: Any,
    digest: str,
    platform: str | None,
    label: str | None,
) -> Candidate:
    base = Candidate(label or digest, platform, manifest_digest=digest)
    try:
        if not isinstance(manifest, dict) or not isinstance(manifest.get("config"), dict):
            raise ReadFailure("invalid-manifest", f"manifest {digest} has no config descriptor")
        config = manifest["config"]
        layers = manifest.get("layers")
        if not isinstance(layers, list) or not all(isinstance(x, dict) for x in layers):
            raise ReadFailure("invalid-manifest", f"manifest {digest} has no layers list")
        refs = tuple(
            LayerRef(blob_path(x.get("digest")), str(x["digest"]), _s(x.get("mediaType")))
            for x in layers
        )
        if platform is None:
            platform = platform_of(read_json_blob(blobs, limits, config.get("digest"), "config"))
        return Candidate(
            label or digest,
            platform,
            config_path=blob_path(config.get("digest")),
            config_digest=str(config.get("digest")),
            layers=refs,
            manifest_digest=digest,
            repo_tags=(label,) if label else (),
        )
    except ReadFailure as exc:
        return Candidate(base.label, platform, manifest_digest=digest, error=exc)


def _docker_candidate(blobs: SmallBlobs, limits: Limits, entry: Any) -> Candidate:
    if not isinstance(entry, dict):
        return Candidate(
            "?",
            None,
            error=ReadFailure("invalid-manifest", "a manifest.json entry is not an object"),
        )
    tags = tuple(str(t) for t in entry.get("RepoTags") or () if isinstance(t, str))
    config_path = normalise(str(entry.get("Config", "")))[0]
    layers = entry.get("Layers")
    label = tags[0] if tags else str(entry.get("Config"))
    if not config_path or not isinstance(layers, list):
        err = ReadFailure("invalid-manifest", "a manifest.json entry without Config and Layers")
        return Candidate(label, None, error=err)
    refs: list[LayerRef] = []
    for layer in layers:
        path = normalise(str(layer))[0]
        if not path:
            err = ReadFailure("invalid-manifest", f"a layer path {layer!r} escapes the archive")
            return Candidate(label, None, error=err)
        refs.append(LayerRef(path, digest_from_path(path), None))
    expected = digest_from_path(config_path)
    platform: str | None = None
    try:
        if not blobs.has(config_path):
            raise ReadFailure("blob-missing", f"the config {config_path} is not in the archive")
        data = blobs.read_small(config_path, limits.max_json_bytes)
        verify(data, expected, "the image config")
        platform = platform_of(load_json(data, "config"))
    except ReadFailure as exc:
        return Candidate(label, None, config_path, expected, tuple(refs), repo_tags=tags, error=exc)
    return Candidate(label, platform, config_path, expected, tuple(refs), repo_tags=tags)


def choose(candidates: list[Candidate], wanted: str | None) -> Candidate:
    """The one image for ``wanted`` (default linux/amd64, else the only image), or raise."""
    listing = _listing(candidates) or "none"
    if not candidates:
        raise ReadFailure("no-image", "the archive holds no image")
    target = parse_platform(wanted or "linux/amd64")
    matches = [c for c in candidates if c.platform and _matches(parse_platform(c.platform), target)]
    if not matches and wanted is None and len(candidates) == 1:
        matches = candidates
    if len(matches) == 1:
        return matches[0]
    want = wanted or "linux/amd64 (the default)"
    if not matches:
        raise ReadFailure(
            "platform-not-found", f"no image for platform {want}; candidates: {listing}"
        )
    names = _listing(matches)
    raise ReadFailure(
        "platform-ambiguous",
        f"{len(matches)} images match platform {want}: {names}; not choosing one",
    )


LISTED_CANDIDATES = 10  # a hostile index may hold thousands: the reason stays readable


def _listing(candidates: list[Candidate]) -> str:
    shown = ", ".join(c.describe() for c in candidates[:LISTED_CANDIDATES])
    more = len(candidates) - LISTED_CANDIDATES
    return shown + (f", ... and {more} more" if more > 0 else "")


def parse_platform(text: str) -> tuple[str, str, str | None]:
    parts = text.strip().lower().split("/")
    if len(parts) not in (2, 3) or not all(parts):
        raise ReadFailure(
            "platform-invalid", f"platform {text!r} is not os/arch[/variant] (e.g. linux/arm64/v8)"
        )
    os_, arch = parts[0], _ARCH_ALIASES.get(parts[1], parts[1])
    variant = parts[2] if len(parts) == 3 else None
    if arch == "arm64" and variant == "v8":
        variant = None
    return os_, arch, variant


def _matches(have: tuple[str, str, str | None], want: tuple[str, str, str | None]) -> bool:
    return have[:2] == want[:2] and (want[2] is None or have[2] == want[2])


def _desc_platform(p: Any) -> str | None:
    return platform_of(p) if isinstance(p, dict) else None


def _s(value: Any) -> str | None:
    return None if value is None else str(value)
