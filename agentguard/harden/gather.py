"""What `agentguard harden` reads: the inspect report of TARGET, and what the writers need
besides -- the image's or container's start command, the compose services, the Claude
settings files, the lock's dependency graph.

The findings harden fixes are the ones `agentguard inspect` reports (same detection,
same policy); every extra read is a :class:`Source` (a failed read is never an empty
result).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentguard import safeio
from agentguard.config import Config
from agentguard.findings import Finding, Report, Source
from agentguard.harden.code_gather import (
    compose_code,
    container_code,
    devcontainer_docs,
    dockerfile_code,
    engine_texts,
)
from agentguard.harden.compose_service import service_from_compose
from agentguard.harden.model import HardenOptions, ServiceSpec
from agentguard.harden.services import (
    image_config_from_attrs,
    service_from_build,
    service_from_container,
    service_from_image,
)
from agentguard.inspect import engine as eng
from agentguard.inspect.facts import ImageConfig
from agentguard.inspect.project.model import ClaudeSettings
from agentguard.lock.graph import LockGraph

Progress = Callable[[str], None]


@dataclass(frozen=True)
class Gathered:
    report: Report
    kind: str | None
    services: tuple[ServiceSpec, ...]
    agent: Mapping[str, Any]  # the agent-configuration facts (project or image files)
    settings: tuple[ClaudeSettings, ...]
    graph: LockGraph | None
    config: Config
    sources: tuple[Source, ...]
    top_level: dict[str, Any] = field(default_factory=dict)
    root: Path | None = None
    devcontainers: tuple[tuple[str, Mapping[str, Any]], ...] = ()  # (path, parsed document)
    engine_texts: Mapping[str, str] = field(default_factory=dict)  # Codex/Gemini files' text


def service_name(ref: str) -> str:
    """A compose-safe service name from an image reference or container name."""
    repo = ref.split("@", 1)[0].rsplit("/", 1)[-1].split(":", 1)[0]
    clean = re.sub(r"[^a-zA-Z0-9._-]+", "-", repo).strip("-._")
    return clean or "agent"


def secret_variables(findings: list[Finding], subject_prefix: str) -> list[str]:
    """Variables AG402 found baked into an image (config ENV or build history)."""
    return sorted(
        {
            str(f.evidence.get("variable"))
            for f in findings
            if f.rule_id == "AG402"
            and str(f.evidence.get("subject", "")).startswith(subject_prefix)
            and f.evidence.get("variable")
        }
    )


def _image_config_from_facts(image: Mapping[str, Any]) -> ImageConfig:
    def argv(key: str) -> tuple[str, ...] | None:
        v = image.get(key)
        return tuple(str(x) for x in v) if isinstance(v, list) else None

    return ImageConfig(
        user=image.get("user"),
        workdir=image.get("workdir"),
        entrypoint=argv("entrypoint"),
        cmd=argv("cmd"),
    )


def _engine_services(
    opts: HardenOptions, kind: str, report: Report, connect: Callable[[], eng.Engine]
) -> tuple[list[ServiceSpec], list[Source]]:
    engine = connect()
    if engine.client is None:
        return [], [engine.source]
    findings = list(report.findings)
    if kind == "image":
        look = eng.lookup_image(engine.client, opts.target)
        if look.obj is None:
            return [], [look.source]
        cfg = image_config_from_attrs(look.obj.attrs)
        svc = service_from_image(
            service_name(opts.target),
            opts.target,
            cfg,
            secret_variables(findings, "image "),
        )
        return [svc], [look.source]
    look = eng.lookup_container(engine.client, opts.target)
    if look.obj is None:
        return [], [look.source]
    attrs: dict[str, Any] = dict(look.obj.attrs)
    sources = [look.source]
    image_cfg: ImageConfig | None = None
    image_id = attrs.get("Image")
    if isinstance(image_id, str):
        ilook = eng.lookup_image(engine.client, image_id)
        sources.append(ilook.source)
        if ilook.obj is not None:
            image_cfg = image_config_from_attrs(ilook.obj.attrs)
    return [container_code(service_from_container(attrs, image_cfg, opts), attrs, opts)], sources


def _archive_services(opts: HardenOptions, report: Report) -> list[ServiceSpec]:
    image = report.facts.get("image")
    if not isinstance(image, Mapping):
        return []
    ref = str(image.get("image_id") or opts.target)
    svc = service_from_image(
        service_name(Path(opts.target).stem),
        ref,
        _image_config_from_facts(image),
        secret_variables(list(report.findings), "image "),
    )
    note = f"load the image first (`docker load -i {opts.target}`); it runs as {ref}"
    return [dataclasses.replace(svc, notes=(*svc.notes, note))]


def _compose_services(
    path: Path, rel: str, opts: HardenOptions, taken: set[str], root: Path | None = None
) -> tuple[list[ServiceSpec], list[Source], dict[str, Any]]:
    from agentguard.inspect.project.lined import DocumentError
    from agentguard.inspect.project.yaml_lined import load_yaml

    try:
        doc = load_yaml(safeio.read_text(path)).value
    except (OSError, UnicodeDecodeError, DocumentError) as exc:
        return (
            [],
            [
                Source.failed(
                    "file",
                    rel,
                    f"cannot read the services to harden: {exc}",
                    error_code="harden-input-unreadable",
                    retryable=False,
                )
            ],
            {},
        )
    services_raw = doc.get("services") if isinstance(doc, dict) else None
    out: list[ServiceSpec] = []
    for name, body in (services_raw or {}).items() if isinstance(services_raw, dict) else []:
        if not isinstance(body, dict):
            continue
        svc_name = str(name) if str(name) not in taken else f"{path.stem}-{name}"
        taken.add(svc_name)
        svc = service_from_compose(
            svc_name,
            body,
            compose_dir=path.parent,
            out_dir=opts.out,
            opts=opts,
            origin=f"{rel} service {name}",
        )
        out.append(compose_code(svc, body, path.parent, opts, root))
    source = Source.ok("file", rel, f"{len(out)} services read for the hardened configuration")
    return out, [source], _top_level(doc, path.parent, opts.out)


def _top_level(doc: Any, base: Path, out: Path) -> dict[str, Any]:
    """Top-level ``volumes`` and ``secrets`` definitions, file paths re-anchored at ``out``."""
    from agentguard.harden.services import rebase

    defs: dict[str, Any] = {}
    if not isinstance(doc, dict):
        return defs
    for key in ("volumes", "secrets"):
        table = doc.get(key)
        if not isinstance(table, dict):
            continue
        for name, body in table.items():
            if isinstance(body, dict) and isinstance(body.get("file"), str):
                body = {**body, "file": rebase(body["file"], base, out)}
            defs[f"{key}:{name}"] = body
    return defs


def _project_services(
    root: Path, project: Mapping[str, Any], opts: HardenOptions
) -> tuple[list[ServiceSpec], list[Source], dict[str, Any]]:
    containers = project.get("containers") if isinstance(project.get("containers"), Mapping) else {}
    assert isinstance(containers, Mapping)
    services: list[ServiceSpec] = []
    sources: list[Source] = []
    top_level: dict[str, Any] = {}
    taken: set[str] = set()
    for cf in containers.get("compose_files") or []:
        got, src, vols = _compose_services(root / cf["path"], cf["path"], opts, taken, root)
        services += got
        sources += src
        top_level.update(vols)
    if services:
        return services, sources, top_level
    for dc in containers.get("devcontainers") or []:
        services += _devcontainer_service(root, str(dc["path"]), opts, sources)
    if services:
        return services, sources, top_level
    for df in containers.get("dockerfiles") or []:
        rel = str(df["path"])
        dockerfile = root / rel
        name = service_name(dockerfile.parent.name if rel.count("/") else "agent")
        if name in taken:  # two Dockerfiles in one folder: never one script for both
            name = service_name(f"{name}-{dockerfile.name.replace('Dockerfile', '').strip('.-_')}")
        while name in taken:
            name += "-2"
        taken.add(name)
        svc = service_from_build(
            name,
            dockerfile.parent,
            dockerfile,
            opts.out,
            origin=rel,
        )
        services.append(dockerfile_code(svc, dockerfile.parent, dockerfile, opts, root=root))
    return services, sources, top_level


def _devcontainer_service(
    root: Path, rel: str, opts: HardenOptions, sources: list[Source]
) -> list[ServiceSpec]:
    from agentguard.inspect.project.devcontainer_facts import read_devcontainer
    from agentguard.inspect.project.lined import DocumentError

    path = root / rel
    try:
        dc = read_devcontainer(rel, safeio.read_text(path, root=root))
    except (OSError, UnicodeDecodeError, DocumentError) as exc:
        sources.append(
            Source.failed(
                "file",
                rel,
                f"cannot read the devcontainer to harden: {exc}",
                error_code="harden-input-unreadable",
                retryable=False,
            )
        )
        return []
    sources.append(Source.ok("file", rel, "devcontainer read for the hardened configuration"))
    note = (
        "a devcontainer is a development environment that mounts the checkout: run the agent "
        "with this configuration instead"
    )
    if dc.compose_files:
        return []  # its compose file is hardened as a compose file
    if dc.image:
        return [ServiceSpec(name="devcontainer", image=dc.image, origin=rel, notes=(note,))]
    if dc.dockerfile:
        context = (path.parent / (dc.build_context or ".")).resolve()
        svc = service_from_build(
            "devcontainer", context, path.parent / dc.dockerfile, opts.out, rel
        )
        return [dataclasses.replace(svc, notes=(note,))]
    return []


def _settings(root: Path, paths: list[str]) -> tuple[list[ClaudeSettings], list[Source]]:
    from agentguard.inspect.project.claude_settings import parse_settings
    from agentguard.inspect.project.lined import DocumentError

    out: list[ClaudeSettings] = []
    sources: list[Source] = []
    for rel in paths:
        try:
            out.append(parse_settings(rel, safeio.read_bytes(root / rel, root=root)))
        except (OSError, DocumentError) as exc:
            sources.append(
                Source.failed(
                    "file",
                    rel,
                    f"cannot read the settings to harden: {exc}",
                    error_code="harden-input-unreadable",
                    retryable=False,
                )
            )
    return out, sources


def _lock(root: Path) -> tuple[LockGraph | None, Source]:
    from agentguard.lock.lockfile import PYLOCK, LockfileError
    from agentguard.lock.stored import read_stored

    name = str(root / PYLOCK)
    try:
        stored = read_stored(root)
    except LockfileError as exc:
        return None, Source.failed("lockfile", name, str(exc), error_code=exc.code, retryable=False)
    if stored is None:
        return None, Source.skipped(
            "lockfile",
            name,
            "no lock: the constraint lines come from the lock's graph; run `agentguard lock` "
            "first to get them",
        )
    return stored.graph, Source.ok("lockfile", name, f"{len(stored.graph.edges)} edges read")


def gather(
    opts: HardenOptions,
    *,
    progress: Progress = lambda _m: None,
    connect: Callable[[], eng.Engine] = eng.connect,
) -> Gathered:
    """Inspect TARGET and read what the writers need. UsageError means exit 2."""
    from agentguard.engine.inspect_run import InspectOptions, run_inspect
    from agentguard.inspect.targets import Kind

    report, config = run_inspect(
        InspectOptions(
            target=opts.target,
            kind=Kind(opts.kind) if opts.kind else None,
            platform=opts.platform,
            config_file=opts.config_file,
            project_config=opts.project_config,
            inline_ignores=opts.inline_ignores,
        ),
        progress=progress,
        connect=connect,
    )
    target = report.facts.get("target")
    kind = target.get("kind") if isinstance(target, Mapping) else None
    services: list[ServiceSpec] = []
    sources: list[Source] = []
    top_level: dict[str, Any] = {}
    root: Path | None = None
    agent: Mapping[str, Any] = {}
    if kind in ("image", "container"):
        services, sources = _engine_services(opts, kind, report, connect)
    elif kind in ("archive", "oci"):
        services = _archive_services(opts, report)
    elif kind in ("compose", "project", "file"):
        path = Path(opts.target).expanduser()
        root = path if kind == "project" else path.parent
        if kind == "compose":
            services, sources, top_level = _compose_services(path, path.name, opts, set(), root)
        else:
            project = report.facts.get("project")
            if isinstance(project, Mapping):
                services, sources, top_level = _project_services(root, project, opts)
    project_facts = report.facts.get("project")
    if isinstance(project_facts, Mapping):
        agent = project_facts
    elif isinstance(report.facts.get("agent_config"), Mapping):
        agent = report.facts["agent_config"]
    devcontainers: list[tuple[str, Mapping[str, Any]]] = []
    if root is not None and isinstance(project_facts, Mapping):
        devcontainers = devcontainer_docs(root, project_facts, sources)
    settings: list[ClaudeSettings] = []
    if root is not None and agent.get("settings_files"):
        settings, ssrc = _settings(root, [str(p) for p in agent["settings_files"]])
        sources += ssrc
    texts: dict[str, str] = {}
    if root is not None and isinstance(project_facts, Mapping):
        texts = engine_texts(root, project_facts, list(report.findings), sources)
    graph, lock_source = _lock(root if root is not None else Path.cwd())
    sources.append(lock_source)
    return Gathered(
        report=report,
        kind=kind if isinstance(kind, str) else None,
        services=tuple(services),
        agent=agent,
        settings=tuple(settings),
        graph=graph,
        config=config,
        sources=tuple(sources),
        top_level=top_level,
        root=root,
        devcontainers=tuple(devcontainers),
        engine_texts=texts,
    )
