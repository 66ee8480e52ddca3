"""One `agentguard inspect` run: detect the target, gather facts, run the rules, report.

:func:`inspect_target` gathers and runs the rules (reusable by `agentguard check`);
:func:`run_inspect` adds the configuration (policy, ignores) and makes the Report with
provenance inputs: image id and repo digests, container id, the lock's hash.

Lock discovery (documented choice): without ``--lock``, a ``pylock.toml`` in the current
directory is used for image, container and archive targets, and the report says it was
discovered; ``--no-lock`` turns discovery off. Project targets are left to the
project-folder scan, which finds its own files.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentguard.config import Config, load_target_config
from agentguard.engine import UsageError, container_findings, image_findings
from agentguard.facts.capabilities_json import map_json
from agentguard.findings import Finding, JSONValue, Report, Source
from agentguard.inspect import engine as eng
from agentguard.inspect.targets import Kind, Target, detect_target
from agentguard.provenance import make_report

# The image, container and lock modules are imported by the paths that read those
# targets: a project-folder scan does not pay for them.
if TYPE_CHECKING:
    from agentguard.facts.capabilities import CapabilityMap
    from agentguard.facts.image import ImageFacts
    from agentguard.facts.lock import LockInput
from agentguard.inspect.image_reads import ImageFactsRead, read_engine_image, read_image_file

Progress = Callable[[str], None]


@dataclass(frozen=True)
class InspectOptions:
    target: str
    kind: Kind | None = None
    platform: str | None = None  # "os/arch[/variant]" for multi-platform images
    lock: Path | None = None
    discover_lock: bool = True
    config_file: Path | None = None
    file_kind: str | None = None  # what a named file is (--kind dockerfile, mcp, ...)
    project_config: bool = True  # False: --no-project-config
    inline_ignores: bool = True  # False: --no-inline-ignores
    cache: bool = False  # a folder's unchanged files from the content cache (--cache)
    cache_dir: Path | None = None  # --cache-dir (None: the per-user cache folder)


@dataclass(frozen=True)
class InspectResult:
    findings: tuple[Finding, ...] = ()
    sources: tuple[Source, ...] = ()
    facts: dict[str, JSONValue] = field(default_factory=dict)
    inputs: dict[str, JSONValue] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    maps: tuple[CapabilityMap, ...] = ()  # the agent capability maps of what was read


def _lock_for(opts: InspectOptions, kind: Kind | None) -> tuple[LockInput | None, list[Source]]:
    if opts.lock is None and (
        not opts.discover_lock or kind in (Kind.PROJECT, Kind.COMPOSE, Kind.FILE, None)
    ):
        return None, []
    from agentguard.facts.lock import LOCK_NAME, OTHER_LOCKS
    from agentguard.inspect.lock_input import read_lock

    if opts.lock is not None:
        lock, source = read_lock(opts.lock)
        return lock, [source]
    found = [Path(n) for n in (LOCK_NAME, *OTHER_LOCKS) if Path(n).is_file()]
    if len(found) > 1:  # never the first of two: the user names the one the image used
        names = ", ".join(str(p) for p in found)
        return None, [
            Source.skipped(
                "lockfile", names, f"several locks here ({names}): pass --lock; AG110 not run"
            )
        ]
    if not found:
        return None, [
            Source.skipped(
                "lockfile",
                LOCK_NAME,
                "no --lock and no pylock.toml, uv.lock or poetry.lock here: AG110 not run",
            )
        ]
    candidate = found[0]
    lock, source = read_lock(candidate, discovered=True)
    return lock, [source]


def _image_part(
    image: ImageFacts,
    *,
    lock: LockInput | None,
    config: Config,
    workdir: str | None,
    runtime: bool,
    workdir_hidden: bool = False,
    env: tuple[tuple[str, str], ...] | None = None,
    argv: tuple[tuple[str, ...] | None, tuple[str, ...] | None] | None = None,
) -> InspectResult:
    """Rules over one image, its agent (wherever it is in the image), and its facts."""
    from agentguard.facts.project_file import ProjectFile
    from agentguard.inspect.image.agentfiles import find_agent
    from agentguard.inspect.summary import agent_files, image_facts_json
    from agentguard.rules.mounts import effective_workdir

    findings = image_findings(
        image,
        lock=lock,
        watched=config.deps.watched,
        workdir=workdir,
        runtime=runtime,
        workdir_hidden=workdir_hidden,
    )
    wd = effective_workdir(workdir or "", image.config.workdir)
    agent = find_agent(image, env=env, workdir=workdir, argv=argv)
    sources: list[Source] = list(agent.sources)
    image_json = image_facts_json(image, wd)
    image_json["agent"] = agent.facts
    facts: dict[str, JSONValue] = {"image": image_json}
    picked = {c.path: c for c, _ in (agent_files(image, wd) if wd is not None else [])}
    for f in agent.files:
        picked.setdefault(f.content.path, f.content)
    maps: tuple[CapabilityMap, ...] = ()
    if picked or agent.configs:
        from agentguard.engine.project import inspect_files

        result = inspect_files(
            [
                ProjectFile(c.path, c.data, origin=f"image:{c.layer_digest}")
                for c in picked.values()
            ],
            workdir=wd,
            configs=agent.configs,
            target=image.target,
        )
        layers = {c.path: c.layer_digest for c in image.contents}
        layers.update({f.content.path: f.content.layer_digest for f in agent.files})
        findings += [_in_layer(f, layers) for f in result.findings]
        sources += list(result.sources)
        if result.facts:
            facts["agent_config"] = dict(result.facts)
        if result.capabilities is not None:
            maps = (result.capabilities,)
    inputs: dict[str, JSONValue] = {
        "image_id": image.image_id,
        "repo_digests": list(image.repo_digests),
    }
    return InspectResult(tuple(findings), tuple(sources), facts, inputs, maps=maps)


def _in_layer(finding: Finding, layers: dict[str, str]) -> Finding:
    """Image files are located by layer and path."""
    locations = tuple(
        replace(loc, layer=layers[loc.path]) if loc.path in layers and loc.layer is None else loc
        for loc in finding.locations
    )
    return replace(finding, locations=locations) if locations != finding.locations else finding


def _merge(*parts: InspectResult) -> InspectResult:
    findings: list[Finding] = []
    sources: list[Source] = []
    facts: dict[str, JSONValue] = {}
    inputs: dict[str, JSONValue] = {}
    notes: list[str] = []
    maps: list[CapabilityMap] = []
    for p in parts:
        maps += p.maps
        findings += p.findings
        sources += p.sources
        facts.update(p.facts)
        inputs.update(p.inputs)
        notes += p.notes
    return InspectResult(tuple(findings), tuple(sources), facts, inputs, tuple(notes), tuple(maps))


def inspect_target(
    opts: InspectOptions,
    *,
    config: Config,
    progress: Progress = lambda _m: None,
    connect: Callable[[], eng.Engine] = eng.connect,
) -> InspectResult:
    """Detect, gather and run the rules (no policy applied). UsageError means exit 2."""
    progress(f"finding out what {opts.target} is")
    target = detect_target(opts.target, opts.kind, connect)
    head = InspectResult(
        sources=target.sources,
        facts={"target": {"text": target.text, "kind": _kind(target), "how": target.how}},
        inputs={"kind": _kind(target)} if target.kind is not None else {},
    )
    if target.kind is None:
        return head
    lock, lock_sources = _lock_for(opts, target.kind)
    lock_part = InspectResult(
        sources=tuple(lock_sources),
        inputs={"lock": {"path": lock.path, "sha256": lock.sha256, "discovered": lock.discovered}}
        if lock
        else {},
        notes=(f"compared with {lock.path} (found in the current directory)",)
        if lock and lock.discovered
        else (),
    )
    if target.kind in (Kind.PROJECT, Kind.COMPOSE, Kind.FILE):
        file_kind = opts.file_kind or ("compose" if target.kind is Kind.COMPOSE else None)
        return _merge(
            head,
            _project(
                target,
                file_kind=file_kind,
                exclude=config.exclude,
                opts=opts,
                contexts=config.contexts,
            ),
        )
    if target.kind.is_image_file:
        assert target.path is not None
        progress(f"reading {target.path}")
        read = read_image_file(target.path, target=target.text, platform=opts.platform)
        return _merge(head, lock_part, _after_read(read, lock=lock, config=config))
    if target.kind is Kind.IMAGE:
        progress(f"reading image {target.text} from the engine")
        read = read_engine_image(target.engine_obj, target=target.text, platform=opts.platform)
        return _merge(head, lock_part, _after_read(read, lock=lock, config=config))
    return _merge(
        head, lock_part, _container(target, opts, lock=lock, config=config, progress=progress)
    )


def _kind(target: Target) -> str | None:
    return target.kind.value if target.kind is not None else None


def _after_read(read: ImageFactsRead, *, lock: LockInput | None, config: Config) -> InspectResult:
    gathered = InspectResult(sources=read.sources)
    if read.facts is None:
        return gathered
    return _merge(
        gathered, _image_part(read.facts, lock=lock, config=config, workdir=None, runtime=False)
    )


def _container(
    target: Target,
    opts: InspectOptions,
    *,
    lock: LockInput | None,
    config: Config,
    progress: Progress,
) -> InspectResult:
    from agentguard.inspect.container import container_facts
    from agentguard.inspect.summary import container_facts_json
    from agentguard.rules.inspected import container_workdir, workdir_hidden_by_mount

    obj = target.engine_obj
    attrs: dict[str, Any] = dict(getattr(obj, "attrs", {}) or {})
    image_id = attrs.get("Image") if isinstance(attrs.get("Image"), str) else None
    sources: list[Source] = []
    image: ImageFacts | None = None
    image_part = InspectResult()
    if image_id is None:
        sources.append(
            Source.failed(
                "image",
                target.text,
                "the container record names no image",
                error_code="engine-error",
                retryable=False,
            )
        )
    else:
        progress(f"reading the image of container {target.text}")
        client = getattr(obj, "client", None)
        look = eng.lookup_image(client, image_id) if client is not None else None
        if look is None or look.obj is None:
            sources.append(
                look.source
                if look is not None
                else Source.failed("image", image_id, "no engine client", error_code="engine-error")
            )
        else:
            read = read_engine_image(
                look.obj,
                target=image_id,
                platform=opts.platform,
                runs=obj,
                agent_args=lambda img: _container_agent_args(container_facts(attrs, img)),
            )
            sources += read.sources
            image = read.facts
    facts = container_facts(attrs, image)
    workdir = container_workdir(facts)
    if image is not None:
        image_part = _image_part(
            image,
            lock=lock,
            config=config,
            workdir=facts.workdir or None,
            runtime=True,
            workdir_hidden=workdir_hidden_by_mount(facts),
            env=facts.env,
            argv=(facts.entrypoint, facts.cmd),
        )
    findings = container_findings(facts)
    return _merge(
        InspectResult(
            tuple(findings),
            tuple(sources),
            {"container": container_facts_json(facts, workdir)},
            {"container_id": facts.id},
        ),
        image_part,
    )


def _container_agent_args(facts: Any) -> dict[str, Any]:
    """What a container runs, for :func:`find_agent` (as :func:`_image_part` is given it)."""
    return {
        "env": facts.env,
        "workdir": facts.workdir or None,
        "argv": (facts.entrypoint, facts.cmd),
    }


def _project(
    target: Target,
    *,
    file_kind: str | None,
    exclude: tuple[str, ...],
    opts: InspectOptions,
    contexts: Mapping[str, tuple[str, ...]],
) -> InspectResult:
    assert target.path is not None
    from agentguard.engine.project import inspect_project
    from agentguard.inspect.project.cache import CacheDirInside

    try:
        result = inspect_project(
            target.path,
            file_kind=file_kind,
            exclude=exclude,
            use_cache=opts.cache,
            cache_dir=opts.cache_dir,
            contexts=contexts,
        )
    except CacheDirInside as exc:
        raise UsageError(str(exc)) from None
    return InspectResult(
        tuple(result.findings),
        tuple(result.sources),
        {"project": dict(result.facts)},
        maps=(result.capabilities,) if result.capabilities is not None else (),
    )


def project_root(text: str) -> Path:
    """Whose configuration a run reads: a folder target's own; a file's nearest folder
    (itself or above, up to the checkout's top) holding agentguard.toml or
    pyproject.toml; otherwise (an image, a container) the current directory."""
    path = Path(text).expanduser()
    if path.is_dir():
        return path
    if not path.is_file():
        return Path.cwd()
    folder = path.resolve().parent
    for candidate in (folder, *folder.parents):
        if (candidate / "agentguard.toml").is_file() or (candidate / "pyproject.toml").is_file():
            return candidate
        if (candidate / ".git").exists():
            break
    return path.parent


def run_inspect(
    opts: InspectOptions,
    *,
    progress: Progress = lambda _m: None,
    connect: Callable[[], eng.Engine] = eng.connect,
) -> tuple[Report, Config]:
    """The whole command: config, inspect, policy, report. UsageError means exit 2."""
    report, config, _maps = run_with_maps(opts, progress=progress, connect=connect)
    return report, config


def run_with_maps(
    opts: InspectOptions,
    *,
    command: str = "inspect",
    progress: Progress = lambda _m: None,
    connect: Callable[[], eng.Engine] = eng.connect,
) -> tuple[Report, Config, tuple[CapabilityMap, ...]]:
    """:func:`run_inspect`, and the agent capability maps it built (`agentguard map`)."""
    root = project_root(opts.target)
    config, config_sources = load_target_config(
        root,
        config_file=opts.config_file,
        project_config=opts.project_config,
        inline_ignores=opts.inline_ignores,
    )
    result = inspect_target(opts, config=config, progress=progress, connect=connect)
    from agentguard.policy import apply_policy  # (a project scan imports it while it reads)

    target = Path(opts.target).expanduser()
    # findings of a named file are located by its name: inline comments are read beside it
    applied = apply_policy(
        result.findings, config, root=target.parent if target.is_file() else root
    )
    report = make_report(
        command,
        applied.findings,
        (*config_sources, *result.sources, *applied.sources),
        target=opts.target,
        inputs=result.inputs,
        facts=result.facts,
        notes=(*config.notes, *result.notes, *applied.notes),
        configuration=applied.trace,
        agent_map=map_json(result.maps),
    )
    return report, config, result.maps


__all__ = [
    "InspectOptions",
    "InspectResult",
    "inspect_target",
    "run_inspect",
    "run_with_maps",
]
