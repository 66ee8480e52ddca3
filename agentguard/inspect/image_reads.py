"""Reading an image for `inspect`: a `docker save` tarball or OCI layout from disk, or an
engine image streamed from `image.save()` (never to disk). Facts and sources, no rules."""

from __future__ import annotations

import io
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentguard.findings import Source
from agentguard.inspect import engine as eng

if TYPE_CHECKING:
    from agentguard.facts.image import ImageFacts


@dataclass(frozen=True)
class ImageFactsRead:
    facts: ImageFacts | None
    sources: tuple[Source, ...]


def read_image_file(path: Path, *, target: str, platform: str | None) -> ImageFactsRead:
    """A `docker save` tarball or an OCI layout (folder or tar) through the streaming reader."""
    from agentguard.inspect.image import read_image_archive

    read = read_image_archive(path, target=target, platform=platform)
    return ImageFactsRead(read.facts, tuple(read.sources))


def read_engine_image(
    image: Any, *, target: str, platform: str | None, runs: Any = None
) -> ImageFactsRead:
    """An engine image: `image.save()`'s stream fed to the same reader, never to disk.

    ``runs``: a container's config (what it runs, its environment), collected for too."""
    from agentguard.inspect.image import read_image_stream
    from agentguard.inspect.image.result import plan_of

    try:
        stream = eng.save_stream(image)
    except Exception as exc:
        return ImageFactsRead(
            None, (eng.failed_source("engine", target, "cannot save the image", exc),)
        )
    # BufferedReader: read(n) returns n bytes unless at the end (the raw stream may return less)
    buffered = io.BufferedReader(stream, buffer_size=eng.SAVE_CHUNK)
    container = _engine_config(runs) if runs is not None else None
    read = read_image_stream(
        buffered,
        target=target,
        platform=platform,
        expected=_engine_config(image),
        extra_plans=(plan_of(container),) if container is not None else (),
    )
    facts = read.facts
    if facts is not None:
        repo_digests = tuple(image.attrs.get("RepoDigests") or ()) or facts.repo_digests
        facts = replace(facts, repo_digests=repo_digests, image_id=facts.image_id or image.id)
    return ImageFactsRead(facts, (*read.sources, eng.stream_source(target, stream)))


def _engine_config(image: Any) -> Any:
    """The config the engine's inspect record gives (the stream's own config decides)."""
    from agentguard.inspect.image.imageconfig import parse_config
    from agentguard.inspect.image.limits import ReadFailure

    attrs = getattr(image, "attrs", None)
    config = attrs.get("Config") if isinstance(attrs, dict) else None
    if not isinstance(config, dict):
        return None
    try:
        return parse_config({"config": config})
    except ReadFailure:
        return None
