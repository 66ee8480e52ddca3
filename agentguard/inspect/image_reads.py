"""Reading an image for `inspect`: a `docker save` tarball or OCI layout from disk, or an
engine image streamed from `image.save()` (never to disk). Facts and sources, no rules."""

from __future__ import annotations

import io
from collections.abc import Callable
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

    def once(extra: tuple[Any, ...]) -> ImageFactsRead:
        read = read_image_archive(path, target=target, platform=platform, extra_plans=extra)
        return ImageFactsRead(read.facts, tuple(read.sources))

    return following_links(once, target, lambda facts: {})


def following_links(
    read: Callable[[tuple[Any, ...]], ImageFactsRead],
    target: str,
    agent_args: Callable[[ImageFacts], dict[str, Any]],
) -> ImageFactsRead:
    """Read an image again while the agent's paths lead through links to files the read did
    not collect (the links are known only once every layer has been read): at most
    MAX_READS reads; what is still not collected then is a failed source."""
    from agentguard.inspect.image.agentfiles import find_agent
    from agentguard.inspect.image.agentplan import link_plan

    done = read(())
    wants: set[str] = set()
    for _ in range(MAX_READS - 1):
        if done.facts is None:
            break
        new = set(find_agent(done.facts, **agent_args(done.facts)).unread) - wants
        if not new:
            break
        wants |= new
        done = read((link_plan(wants),))
        note = Source.ok(
            "image-links",
            target,
            f"read again for {len(wants)} paths the agent reaches through links",
        )
        done = ImageFactsRead(done.facts, (*done.sources, note))
    return done


MAX_READS = 3  # of one image, following links to files the first read did not collect


def read_engine_image(
    image: Any,
    *,
    target: str,
    platform: str | None,
    runs: Any = None,
    agent_args: Callable[[ImageFacts], dict[str, Any]] = lambda facts: {},
) -> ImageFactsRead:
    """An engine image: `image.save()`'s stream fed to the same reader, never to disk; saved
    again when links lead the agent to files the first read did not collect."""

    def once(extra: tuple[Any, ...]) -> ImageFactsRead:
        return _read_engine_once(image, target=target, platform=platform, runs=runs, extra=extra)

    return following_links(once, target, agent_args)


def _read_engine_once(
    image: Any, *, target: str, platform: str | None, runs: Any, extra: tuple[Any, ...]
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
        extra_plans=((plan_of(container),) if container is not None else ()) + extra,
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
