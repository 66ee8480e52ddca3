"""From an archive's small files to a plan: the chosen image, its config, its layers in order."""

from __future__ import annotations

from dataclasses import dataclass, field

from agentguard.findings import Source
from agentguard.inspect.image.imageconfig import ParsedConfig, load_json, parse_config, verify
from agentguard.inspect.image.layout import Candidate, SmallBlobs, choose, find_candidates
from agentguard.inspect.image.limits import Limits, ReadFailure
from agentguard.inspect.image.result import LayerOutcome, failed


@dataclass
class Resolved:
    layout: str
    chosen: Candidate
    parsed: ParsedConfig | None
    image_id: str | None
    outcomes: list[LayerOutcome]
    sources: list[Source] = field(default_factory=list)


def resolve(
    blobs: SmallBlobs, platform: str | None, limits: Limits, sources: list[Source]
) -> Resolved | None:
    """The plan, or None when no single image can be read (failed sources appended)."""
    try:
        layout, candidates = find_candidates(blobs, limits)
    except ReadFailure as exc:
        sources.append(failed("image-layout", "index.json / manifest.json", exc))
        return None
    try:
        chosen = choose(candidates, platform)
    except ReadFailure as exc:
        sources.append(failed("image-platform", platform or "default", exc))
        return None
    if chosen.error is not None:
        sources.append(failed("image-manifest", chosen.describe(), chosen.error))
        return None
    sources.append(
        Source.ok(
            "image-manifest",
            chosen.manifest_digest or chosen.label,
            f"{layout} layout: {chosen.describe()}, {len(chosen.layers)} layers"
            + (f", chosen from {len(candidates)} images" if len(candidates) > 1 else ""),
        )
    )
    parsed: ParsedConfig | None = None
    image_id: str | None = None
    config_name = chosen.config_digest or chosen.config_path or "config"
    try:
        if chosen.config_path is None or not blobs.has(chosen.config_path):
            raise ReadFailure("blob-missing", f"the config {config_name} is not in the archive")
        data = blobs.read_small(chosen.config_path, limits.max_json_bytes)
        image_id = verify(data, chosen.config_digest, "the image config")
        parsed = parse_config(load_json(data, "the image config"))
        sources.append(Source.ok("image-config", image_id, f"working directory /{parsed.workdir}"))
    except ReadFailure as exc:
        sources.append(failed("image-config", config_name, exc))
        image_id = None
    diff_ids: tuple[str, ...] | None = parsed.diff_ids if parsed else None
    if diff_ids is not None and len(diff_ids) != len(chosen.layers):
        sources.append(
            Source.failed(
                "image-config",
                image_id or config_name,
                f"the config lists {len(diff_ids)} layers, the manifest {len(chosen.layers)}",
                error_code="diff-ids-mismatch",
                retryable=False,
            )
        )
        diff_ids = None
    outcomes = [
        LayerOutcome(i, ref, diff_ids[i] if diff_ids else None)
        for i, ref in enumerate(chosen.layers)
    ]
    return Resolved(layout, chosen, parsed, image_id, outcomes, sources)
