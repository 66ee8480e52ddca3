"""What a read returns (:class:`ImageRead`), and how layer scans become facts and sources."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from agentguard.findings import Source, SourceStatus
from agentguard.inspect.facts import ImageConfig, ImageFacts, LayerInfo
from agentguard.inspect.image.agentplan import AgentPlan, plan_for
from agentguard.inspect.image.imageconfig import ParsedConfig
from agentguard.inspect.image.layerscan import LayerScan, Problem
from agentguard.inspect.image.layout import Candidate, LayerRef
from agentguard.inspect.image.limits import Limits, ReadFailure
from agentguard.inspect.image.merge import merge

RETRYABLE = frozenset({"stream-read-error", "read-error"})


@dataclass(frozen=True)
class ImageRead:
    """Facts about one saved image and every source read for them.

    ``facts`` is None when no image could be chosen or opened (the sources say why). With a
    failed source the facts are partial: what was read is kept, and the report is incomplete.
    """

    facts: ImageFacts | None
    sources: tuple[Source, ...]
    layout: str | None = None  # "docker-save" | "oci"
    image_id: str | None = None  # config digest, verified
    manifest_digest: str | None = None
    platform: str | None = None
    repo_tags: tuple[str, ...] = ()

    @property
    def complete(self) -> bool:
        return all(s.status is not SourceStatus.FAILED for s in self.sources)


def plan_of(parsed: ParsedConfig) -> AgentPlan:
    """The agent plan of an image config (what its layers are scanned for)."""
    c = parsed.config
    return plan_for(c.entrypoint, c.cmd, c.env, parsed.workdir)


def failed(kind: str, name: str, exc: ReadFailure) -> Source:
    return Source.failed(
        kind, name, exc.reason, error_code=exc.code, retryable=exc.code in RETRYABLE
    )


@dataclass
class LayerOutcome:
    index: int
    ref: LayerRef
    diff_id: str | None
    scan: LayerScan | None = None
    failure: ReadFailure | None = None  # could not be opened or read at all

    @property
    def digest(self) -> str:
        if self.diff_id:
            return self.diff_id
        if self.ref.blob_digest:
            return self.ref.blob_digest
        if self.scan is not None and (self.scan.data_digest or self.scan.raw_digest):
            return self.scan.data_digest or self.scan.raw_digest or ""
        return f"unknown:{self.ref.path}"

    @property
    def name(self) -> str:
        return f"layer {self.index} {self.digest}"


def check_digests(outcome: LayerOutcome, verified: bool) -> tuple[ReadFailure | None, str]:
    """Compare what was hashed with what the layout promised; a note for the source."""
    scan, ref = outcome.scan, outcome.ref
    if scan is None or not verified:
        return None, "digest not verified"
    notes: list[str] = []
    if ref.blob_digest and scan.raw_digest:
        if scan.raw_digest != ref.blob_digest.lower():
            return ReadFailure(
                "digest-mismatch",
                f"{ref.path} has digest {scan.raw_digest}, the manifest says {ref.blob_digest}",
            ), ""
        notes.append("blob digest verified")
    data = scan.data_digest or (scan.raw_digest if scan.compression == "none" else None)
    if outcome.diff_id and data and data.split(":")[0] == outcome.diff_id.split(":")[0]:
        if data != outcome.diff_id.lower():
            return ReadFailure(
                "diff-id-mismatch",
                f"{ref.path} holds a tar with digest {data}, the config says {outcome.diff_id}",
            ), ""
        notes.append("diff_id verified")
    return None, ", ".join(notes) or "no digest to verify"


def assemble(
    *,
    target: str,
    layout: str,
    chosen: Candidate,
    parsed: ParsedConfig | None,
    image_id: str | None,
    outcomes: Sequence[LayerOutcome],
    limits: Limits,
    listing_truncated: bool,
    sources: list[Source],
    plan: AgentPlan | None = None,
    link_wants: tuple[str, ...] = (),
    links_truncated: bool = False,
) -> ImageRead:
    layer_sources: list[Source] = []
    infos: list[LayerInfo] = []
    created = _created_by(parsed, len(outcomes), sources)
    problems: list[tuple[Problem, str]] = []
    all_read = True
    for o in outcomes:
        failure = o.failure or (o.scan.failure if o.scan else None)
        digest_failure, note = check_digests(o, limits.verify_layer_digests)
        failure = failure or digest_failure
        scan = o.scan
        all_read = all_read and failure is None and scan is not None
        if failure is not None:
            layer_sources.append(failed("image-layer", o.name, _where(failure, o)))
        else:
            assert scan is not None
            layer_sources.append(
                Source.ok(
                    "image-layer",
                    o.name,
                    f"{scan.entries} entries, {scan.compression} ({o.ref.path}), {note}",
                )
            )
        if scan is not None:
            problems.extend((p, o.name) for p in scan.problems)
        infos.append(
            LayerInfo(
                index=o.index,
                digest=o.digest,
                created_by=created[o.index] if created else None,
                media_type=o.ref.media_type,
                compression=scan.compression if scan else None,
                entries=scan.entries if scan is not None and failure is None else None,
            )
        )
    workdir = parsed.workdir if parsed else None
    merged = merge(
        [(o.index, o.digest, o.scan) for o in outcomes],
        workdir,
        max_entries=limits.max_workdir_entries,
        listing_truncated=listing_truncated,
        plan=plan or (plan_of(parsed) if parsed else None),
    )
    problems.extend((p, "the merged image") for p in merged.problems)
    config = parsed.config if parsed else ImageConfig(user=None, workdir=None)
    facts = ImageFacts(
        target=target,
        image_id=image_id,
        repo_digests=(),
        config=config,
        layers=tuple(infos),
        workdir_entries=merged.entries,
        workdir_entries_truncated=merged.truncated,
        contents=merged.contents,
        installed=merged.installed,
        docker_socket_paths=merged.sockets,
        agent_entries=merged.agent_entries,
        speculative_dropped=merged.speculative_dropped,
        symlinks=merged.symlinks,
        symlinks_complete=all_read and not links_truncated,
        link_wants=link_wants,
    )
    all_sources = [*sources, *layer_sources, *_problem_sources(problems, limits)]
    return ImageRead(
        facts=facts,
        sources=tuple(all_sources),
        layout=layout,
        image_id=image_id,
        manifest_digest=chosen.manifest_digest,
        platform=chosen.platform,
        repo_tags=chosen.repo_tags,
    )


def _where(failure: ReadFailure, o: LayerOutcome) -> ReadFailure:
    return ReadFailure(failure.code, f"layer {o.index} ({o.ref.path}): {failure.reason}")


def _created_by(
    parsed: ParsedConfig | None, n_layers: int, sources: list[Source]
) -> list[str | None] | None:
    """Non-empty history entries map to layers in order; a count mismatch leaves them unknown."""
    if parsed is None:
        return None
    history = [h for h in parsed.config.history if not h.empty_layer]
    if len(history) != n_layers:
        if parsed.config.history or n_layers:
            sources.append(
                Source.skipped(
                    "image-history",
                    "history",
                    f"{len(history)} non-empty history entries for {n_layers} layers: "
                    "created_by left unknown",
                )
            )
        return None
    return [h.created_by for h in history]


def _problem_sources(problems: list[tuple[Problem, str]], limits: Limits) -> list[Source]:
    """One failed source per problem entry, up to a cap per error code, then a summary."""
    out: list[Source] = []
    seen: Counter[str] = Counter()
    for p, where in problems:
        seen[p.code] += 1
        if seen[p.code] <= limits.max_entry_sources:
            out.append(
                Source.failed(
                    "image-file",
                    p.path,
                    f"{p.reason} ({where})",
                    error_code=p.code,
                    retryable=False,
                )
            )
    for code, count in sorted(seen.items()):
        if count > limits.max_entry_sources:
            more = count - limits.max_entry_sources
            out.append(
                Source.failed(
                    "image-file",
                    f"{more} more entries",
                    f"{more} more entries failed with {code} (max_entry_sources cap on listing them)",
                    error_code=code,
                    retryable=False,
                )
            )
    return out
