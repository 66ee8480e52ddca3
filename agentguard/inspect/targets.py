"""What TARGET is: an image, a container, a saved tarball, an OCI layout, a compose file,
a project folder or a single file. Never guessed.

Rules, in order:

1. ``--kind`` decides. A path kind needs the path to exist (else a usage error).
2. A target that can only be a path (starts with ``/``, ``./``, ``../`` or ``~``, or is not
   a valid image reference or container name) is the local file or folder.
3. Otherwise the engine is asked for an image and a container of that name. When more
   than one of {local path, image, container} matches, the target is ambiguous: a usage
   error that names every candidate and the ``--kind`` for each (exit 2).
4. When the engine cannot be reached and the name exists as a local path, the path is
   used and the engine is recorded as a skipped source (a local scan must not need a
   running engine); when it does not exist locally, the engine failure is the result
   (a failed source, exit 3).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentguard.errors import UsageError
from agentguard.findings import Source
from agentguard.inspect.engine import Engine, Lookup, engine_host, lookup_container, lookup_image


class Kind(str, enum.Enum):
    IMAGE = "image"
    CONTAINER = "container"
    ARCHIVE = "archive"
    OCI = "oci"
    COMPOSE = "compose"
    PROJECT = "project"
    FILE = "file"

    @property
    def is_engine(self) -> bool:
        return self in (Kind.IMAGE, Kind.CONTAINER)

    @property
    def is_image_file(self) -> bool:
        return self in (Kind.ARCHIVE, Kind.OCI)


class AmbiguousTarget(UsageError):
    """More than one thing has this name: exit 2 asking for ``--kind``."""


@dataclass(frozen=True)
class Target:
    text: str  # as the user wrote it
    kind: Kind | None  # None: could not be determined (see sources)
    path: Path | None = None  # for path kinds
    engine_obj: Any | None = None  # the SDK's Image or Container, when looked up
    how: str = ""  # how the kind was decided, for the report's facts
    sources: tuple[Source, ...] = ()


# An image reference: [domain[:port]/]name[/name...][:tag][@sha256:hex]
_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_DOMAIN = r"(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9-]+)*(?::\d+)?/)?"
_REFERENCE = re.compile(
    rf"^{_DOMAIN}{_COMPONENT}(?:/{_COMPONENT})*(?::[\w][\w.-]{{0,127}})?(?:@sha256:[0-9a-f]{{64}})?$"
)
_IMAGE_ID = re.compile(r"^(?:sha256:)?[0-9a-f]{4,64}$")
_CONTAINER_NAME = re.compile(r"^/?[a-zA-Z0-9][a-zA-Z0-9_.-]*$")
_COMPOSE_NAMES = re.compile(r"^(?:docker-)?compose(?:\.[\w.-]+)?\.ya?ml$|^.+\.compose\.ya?ml$")


_ARCHIVE_NAMES = (".tar", ".tar.gz", ".tgz", ".tar.zst", ".oci.tar")


def parse_kind(text: str | None) -> tuple[Kind | None, str | None]:
    """``--kind``: a target kind, or a file kind (dockerfile, mcp, ...) that is a FILE."""
    from agentguard.inspect.project.named import FILE_KINDS

    if text is None:
        return None, None
    if text in {k.value for k in Kind}:
        return Kind(text), None
    if text in FILE_KINDS:
        return Kind.FILE, text
    kinds = ", ".join(dict.fromkeys([*(k.value for k in Kind), *FILE_KINDS]))
    raise UsageError(f"unknown --kind {text!r} (expected one of: {kinds})")


def engine_plausible(text: str) -> tuple[bool, bool]:
    """(could be an image reference or id, could be a container name or id)."""
    return (
        bool(_REFERENCE.match(text) or _IMAGE_ID.match(text)),
        bool(_CONTAINER_NAME.match(text)),
    )


def path_only(text: str) -> bool:
    return text.startswith(("/", "./", "../", "~")) or text in (".", "..")


def classify_path(path: Path) -> Kind:
    """The kind of an existing local path (reads at most the tarball's member headers)."""
    if path.is_dir():
        return Kind.OCI if (path / "oci-layout").is_file() else Kind.PROJECT
    if _COMPOSE_NAMES.match(path.name):
        return Kind.COMPOSE
    head = _head(path)
    if head is None:
        return Kind.FILE
    if head[:2] == b"\x1f\x8b" or head[:4] == b"\x28\xb5\x2f\xfd":
        return _compressed_kind(path, head)
    if len(head) >= 262 and head[257:262] == b"ustar":
        return _tar_kind(path)
    if path.name.lower().endswith(_ARCHIVE_NAMES):
        # named as an image archive: read as one, so a file that is not is a failed read
        return Kind.ARCHIVE
    return Kind.FILE


def _head(path: Path) -> bytes | None:
    """The first bytes of a regular file (a FIFO or a device named as a target is never
    opened for a blocking read: None)."""
    from agentguard.safeio import open_regular

    try:
        with open_regular(path, listed=True) as fh:
            return fh.read(512)
    except OSError:
        return None


def _tar_kind(path: Path) -> Kind:
    """`docker save` (manifest.json, with or without an OCI index) or an OCI layout tar."""
    import tarfile  # (a file target only: a folder scan does not import it)

    names: set[str] = set()
    try:
        with tarfile.open(path, "r:") as tf:  # seekable: bodies are skipped, not read
            for n, member in enumerate(tf):
                names.add(member.name.lstrip("./"))
                if n > 10_000:
                    break
    except (tarfile.TarError, OSError):
        return Kind.ARCHIVE  # the reader reports what is wrong with it
    if "oci-layout" in names and "manifest.json" not in names:
        return Kind.OCI
    return Kind.ARCHIVE


def _compressed_kind(path: Path, head: bytes) -> Kind:
    """A compressed file is an image archive only if it decompresses to a tar."""
    try:
        if head[:2] == b"\x1f\x8b":
            import gzip

            with gzip.open(path, "rb") as fh:
                inner = fh.read(512)
        else:
            import zstandard

            with path.open("rb") as raw:
                inner = zstandard.ZstdDecompressor().stream_reader(raw).read(512)
    except Exception:
        return Kind.FILE
    return Kind.ARCHIVE if inner[257:262] == b"ustar" else Kind.FILE


def _check_path_kind(text: str, path: Path, kind: Kind) -> None:
    if not path.exists():
        raise UsageError(f"{text}: no such file or folder (given --kind {kind.value})")
    if kind is Kind.PROJECT and not path.is_dir():
        raise UsageError(f"{text}: --kind project needs a folder")
    if kind in (Kind.ARCHIVE, Kind.COMPOSE, Kind.FILE) and not path.is_file():
        raise UsageError(f"{text}: --kind {kind.value} needs a file")


def detect_target(text: str, kind: Kind | None, connect: Callable[[], Engine]) -> Target:
    """Decide what ``text`` names; raises UsageError / AmbiguousTarget for exit 2."""
    path = Path(text).expanduser()
    if kind is not None and not kind.is_engine:
        _check_path_kind(text, path, kind)
        return Target(text, kind, path, how="--kind")
    if kind is not None:
        engine = connect()
        if engine.client is None:
            return Target(text, None, how="--kind", sources=(engine.source,))
        look = (lookup_image if kind is Kind.IMAGE else lookup_container)(engine.client, text)
        return Target(
            text,
            kind if look.found else None,
            engine_obj=look.obj,
            how="--kind",
            sources=(engine.source, look.source),
        )
    local = classify_path(path) if path.exists() else None
    if local in (Kind.PROJECT, Kind.OCI) and path.is_dir():
        # a folder is read as a folder: the engine is never asked about a name on disk
        return Target(text, local, path, how="a local folder")
    as_image, as_container = engine_plausible(text)
    if path_only(text) or not (as_image or as_container):
        if local is None:
            raise UsageError(f"{text}: no such file or folder")
        return Target(text, local, path, how="a local path")
    engine = connect()
    if engine.client is None:
        if local is not None:
            skipped = Source.skipped(
                "engine",
                engine_host(),
                "no engine reachable there (start one, or set DOCKER_HOST, to look for an "
                f"image or container of this name); {text!r} taken as the local "
                f"{local.value} without checking for an image or container of that name; "
                "pass --kind to be explicit",
            )
            return Target(
                text, local, path, how="a local path (engine not reachable)", sources=(skipped,)
            )
        return Target(text, None, how="engine not reachable", sources=(engine.source,))
    image = lookup_image(engine.client, text) if as_image else None
    container = lookup_container(engine.client, text) if as_container else None
    return _decide(text, path, local, engine, image, container)


def _decide(
    text: str,
    path: Path,
    local: Kind | None,
    engine: Engine,
    image: Lookup | None,
    container: Lookup | None,
) -> Target:
    candidates: list[tuple[Kind, str]] = []
    if local is not None:
        candidates.append((local, f"the local {'folder' if path.is_dir() else 'file'} {path}"))
    if image is not None and image.found:
        candidates.append((Kind.IMAGE, f"the image {getattr(image.obj, 'id', text)}"))
    if container is not None and container.found:
        cname = getattr(container.obj, "name", text)
        candidates.append((Kind.CONTAINER, f"the container {cname}"))
    if len(candidates) > 1:
        listed = "; ".join(f"{what} (--kind {k.value})" for k, what in candidates)
        raise AmbiguousTarget(
            f"{text!r} is ambiguous: it names {listed}. Pass --kind to say which one."
        )
    lookups = [lk for lk in (image, container) if lk is not None]
    unanswered = [lk.source for lk in lookups if lk.found is None]
    if unanswered:
        # The engine could not say whether the name exists: deciding now would be a guess.
        return Target(text, None, how="engine lookup failed", sources=(engine.source, *unanswered))
    if not candidates:
        return Target(
            text,
            None,
            how="not found",
            sources=(
                engine.source,
                Source.failed(
                    "target",
                    text,
                    f"no file or folder, and no image or container named {text!r} in the engine "
                    f"at {engine_host()}",
                    error_code="not-found",
                    retryable=False,
                    remedy="check the name; `docker images` and `docker ps -a` list the engine's",
                ),
            ),
        )
    kind, _ = candidates[0]
    if kind is Kind.IMAGE and image is not None:
        return Target(
            text,
            kind,
            engine_obj=image.obj,
            how="an image in the engine",
            sources=(engine.source, image.source),
        )
    if kind is Kind.CONTAINER and container is not None:
        return Target(
            text,
            kind,
            engine_obj=container.obj,
            how="a container in the engine",
            sources=(engine.source, container.source),
        )
    return Target(
        text,
        kind,
        path,
        how="a local path (no image or container of that name)",
        sources=(engine.source,),
    )
