"""AG212: a COPY of the whole build context, or of a folder of it, into the agent's
working directory, and the files it takes that the agent should never read.

With the walk's facts of the folder (:class:`TreeFacts`), the finding names the files
that really go into the image (the tree minus the .dockerignore), and a ``.env`` the
.gitignore says users create locally. Without them (files collected from an image), it
probes typical names. Facts only: no I/O.
"""

from __future__ import annotations

import posixpath

from agentguard.facts.build_copies import copied_files
from agentguard.facts.dockerfile import CopyStep, DockerfileFacts
from agentguard.facts.project import DockerIgnore, TreeFacts
from agentguard.findings import Confidence, Finding, Fix, Location, Severity
from agentguard.rules.buildfiles import BuildContextCopiedToWorkdir
from agentguard.rules.mounts import workdir_relation

KEEP_OUT_PROBES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("docs", ("docs/index.md",)),
    ("plans", ("PLAN.md", "plans/next.md")),
    (".env", (".env", ".env.production")),
    ("keys", ("id_rsa", "server.key", "cert.pem")),
)
_WHOLE_CONTEXT = frozenset({".", "./", "*", "./*", "/"})
_SHOWN = 4  # files named per category; the evidence keeps them all


def leaked_categories(ignore: DockerIgnore | None) -> dict[str, list[str]]:
    """Probe paths per category that ``ignore`` lets into the build context."""
    out: dict[str, list[str]] = {}
    for category, probes in KEEP_OUT_PROBES:
        leaked = [p for p in probes if ignore is None or not ignore.excluded(p)]
        if leaked:
            out[category] = leaked
    return out


def _folder_sources(copy: CopyStep, tree: TreeFacts | None) -> list[str]:
    """What a COPY takes as whole folders: the context, or (with the tree) a subfolder."""
    if set(copy.sources) & _WHOLE_CONTEXT:
        return ["."]
    if tree is None:
        return []
    # a folder as written: a trailing slash, or a name without an extension (`evals`)
    return [
        s
        for s in copy.sources
        if not any(c in s for c in "*?[$") and (s.endswith("/") or "." not in posixpath.basename(s))
    ]


def check_context_copy(
    df: DockerfileFacts,
    ignore: DockerIgnore | None,
    *,
    context: str = ".",
    tree: TreeFacts | None = None,
) -> list[Finding]:
    """AG212 for COPY/ADD of the build context (or a folder of it) into the final stage's
    working directory."""
    stage = df.final
    if stage is None:
        return []
    workdir, _ = df.effective_workdir(stage)
    findings: list[Finding] = []
    for copy in stage.copies:
        sources = _folder_sources(copy, tree) if copy.from_stage is None else []
        if not sources:
            continue
        relative = not copy.destination.startswith("/")
        if workdir is None and not relative:
            relation, confidence = "unknown", Confidence.LOW
        else:
            relation_opt = (
                "at" if relative else workdir_relation(copy.destination_abs, workdir or "/")
            )
            if relation_opt is None:
                continue
            relation, confidence = relation_opt, Confidence.HIGH
        leaked: dict[str, list[str]] = {}
        for source in sources:
            got = (
                leaked_categories(ignore)
                if tree is None
                else copied_files(tree, ignore, context, source)
            )
            for category, paths in got.items():
                leaked.setdefault(category, []).extend(
                    p for p in paths if p not in leaked.get(category, [])
                )
        if not leaked:
            continue
        findings.append(
            _finding(df, copy, sources, workdir, relation, confidence, ignore, leaked, tree is None)
        )
    return findings


def _finding(
    df: DockerfileFacts,
    copy: CopyStep,
    sources: list[str],
    workdir: str | None,
    relation: str,
    confidence: Confidence,
    ignore: DockerIgnore | None,
    leaked: dict[str, list[str]],
    probed: bool,
) -> Finding:
    relative = not copy.destination.startswith("/")
    where = {
        "at": "the working directory",
        "above": f"which contains the working directory {workdir}",
        "below": f"inside the working directory {workdir}",
        "unknown": "the working directory is unknown (set by the base image)",
    }[relation]
    dest = copy.destination_abs if (workdir or not relative) else copy.destination
    listed = ", ".join(
        f"{k} ({', '.join(v[:_SHOWN])}{f', and {len(v) - _SHOWN} more' if len(v) > _SHOWN else ''})"
        for k, v in leaked.items()
    )
    verb = "would let in, if present," if probed else "lets in"
    why = (
        f"there is no .dockerignore, so it takes {listed}"
        if ignore is None and not probed
        else "there is no .dockerignore"
        if ignore is None
        else f"{ignore.path} {verb} {listed}"
    )
    unreadable = ignore is not None and not ignore.readable
    if unreadable:  # what it keeps out is unknown: never a confident finding, never a list
        confidence = Confidence.LOW
        why = f"{ignore.path if ignore else ''} could not be read (what it keeps out is unknown)"
    what = "the whole build context" if sources == ["."] else ", ".join(sources)
    return BuildContextCopiedToWorkdir.finding(
        f"{copy.instruction} copies {what} into {dest} ({where}) and {why}: the agent reads "
        "what is copied there.",
        locations=[Location(path=df.path, line=copy.line)],
        fix=Fix(
            "Copy only what the agent needs (`COPY src/ pyproject.toml ./`), or add a "
            ".dockerignore that keeps docs, plans, .env files and keys out.",
            snippet="*\n!src/\n!pyproject.toml\n!requirements.lock\n",
        ),
        evidence={
            "instruction": copy.instruction,
            "destination": copy.destination_abs,
            "workdir": workdir,
            "relation": relation,
            "dockerignore": ignore.path if ignore else None,
            "not_kept_out": None if unreadable else leaked,
        },
        severity=Severity.HIGH if ignore is None else Severity.MEDIUM,
        confidence=confidence,
    )
