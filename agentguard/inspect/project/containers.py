"""Dockerfiles, compose files, devcontainer.json, requirements: facts, sources, findings.

:func:`scan_container_files` is called by the project scan with the files it collected
(:func:`wants_file` says which). Every file handled here gets a :class:`Source`: ok, or
failed with a stable ``error_code`` (a file that cannot be parsed is never an empty
result). Cross-file facts are joined here: a compose service's working directory from
the Dockerfile it builds or the devcontainer that opens it, the ``.dockerignore`` of a
Dockerfile's build context, the requirements file an install command names.
"""

from __future__ import annotations

import posixpath
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

from agentguard.findings import Finding, JSONValue, Source
from agentguard.inspect.facts import ProjectFile
from agentguard.inspect.project.compose_facts import ComposeFile, read_compose
from agentguard.inspect.project.devcontainer_facts import DevcontainerFacts, read_devcontainer
from agentguard.inspect.project.dockerfile_facts import (
    DockerfileError,
    DockerfileFacts,
    build_facts,
)
from agentguard.inspect.project.dockerignore import DockerIgnore, parse_dockerignore
from agentguard.inspect.project.install_facts import (
    InstallCommand,
    RequirementDecl,
    RequirementsFile,
    find_installs,
    parse_requirement,
    parse_requirements_file,
    pyproject_requirements,
)
from agentguard.inspect.project.kinds import file_kind
from agentguard.inspect.project.lined import DocumentError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


@dataclass
class _Gathered:
    sources: list[Source] = field(default_factory=list)
    dockerfiles: dict[str, DockerfileFacts] = field(default_factory=dict)
    composes: dict[str, ComposeFile] = field(default_factory=dict)
    devcontainers: dict[str, DevcontainerFacts] = field(default_factory=dict)
    ignores: dict[str, DockerIgnore] = field(default_factory=dict)
    requirements: dict[str, RequirementsFile] = field(default_factory=dict)
    decls: list[RequirementDecl] = field(default_factory=list)


def _failed(path: str, reason: str, code: str, remedy: str | None = None) -> Source:
    return Source.failed("file", path, reason, error_code=code, retryable=False, remedy=remedy)


def _read_one(f: ProjectFile, kind: str, g: _Gathered) -> None:
    try:
        text = f.data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        g.sources.append(
            _failed(f.path, f"not UTF-8 text: {exc.reason} at byte {exc.start}", "not-utf8")
        )
        return
    if kind == "dockerfile":
        try:
            df = build_facts(f.path, text)
        except DockerfileError as exc:
            g.sources.append(_failed(f.path, f"not a Dockerfile: {exc}", "dockerfile-parse-error"))
            return
        g.dockerfiles[f.path] = df
        g.sources.append(Source.ok("file", f.path, f"Dockerfile ({df.parser} parser)"))
    elif kind == "compose":
        try:
            cf = read_compose(f.path, text)
        except DocumentError as exc:
            where = f" (line {exc.line})" if exc.line else ""
            g.sources.append(_failed(f.path, f"{exc}{where}", f"compose-{exc.code}"))
            return
        g.composes[f.path] = cf
        if cf.schema_errors:
            g.sources.append(
                _failed(
                    f.path,
                    "does not match the Compose Specification: " + "; ".join(cf.schema_errors),
                    "compose-schema-invalid",
                    "Fix the file (`docker compose config` shows how the engine reads it); "
                    "services were still checked where their values could be read.",
                )
            )
        else:
            g.sources.append(Source.ok("file", f.path, "compose file"))
    elif kind == "devcontainer":
        try:
            dc = read_devcontainer(f.path, text)
        except DocumentError as exc:
            where = f" (line {exc.line})" if exc.line else ""
            g.sources.append(_failed(f.path, f"{exc}{where}", f"devcontainer-{exc.code}"))
            return
        g.devcontainers[f.path] = dc
        g.sources.append(Source.ok("file", f.path, "devcontainer.json"))
    elif kind == "dockerignore":
        g.ignores[f.path] = parse_dockerignore(f.path, text)
        g.sources.append(Source.ok("file", f.path, ".dockerignore"))
    elif kind == "requirements":
        rf = parse_requirements_file(f.path, text)
        g.requirements[f.path] = rf
        g.decls.extend(rf.requirements)
        g.sources.append(Source.ok("file", f.path, "requirements file"))
    elif kind == "pyproject":
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            g.sources.append(_failed(f.path, f"not valid TOML: {exc}", "pyproject-toml-error"))
            return
        g.decls.extend(pyproject_requirements(f.path, text, data))
        g.sources.append(Source.ok("file", f.path, "pyproject.toml (requirements)"))


def gather(files: Sequence[ProjectFile]) -> _Gathered:
    g = _Gathered()
    for f in sorted(files, key=lambda f: f.path):
        kind = file_kind(f.path)
        if kind is None:
            continue
        if not f.readable:  # its failed source is recorded by the reader
            if kind == "dockerignore":
                g.ignores[f.path] = DockerIgnore(f.path, (), readable=False)
            continue
        try:
            _read_one(f, kind, g)
        except RecursionError:
            g.sources.append(_failed(f.path, "nested too deeply to read", "too-deep"))
    return g


# -- joining facts across files -------------------------------------------------------


def _dir(path: str) -> str:
    d = posixpath.dirname(path)
    return d or "."


def _join(base: str, rel: str) -> str:
    return posixpath.normpath(posixpath.join(base, rel)) if not rel.startswith("/") else rel


def _ignore_for(g: _Gathered, dockerfile: str, context: str) -> DockerIgnore | None:
    own = g.ignores.get(f"{dockerfile}.dockerignore")
    if own is not None:
        return own
    key = posixpath.normpath(posixpath.join(context, ".dockerignore"))
    return g.ignores.get(key if key != "./.dockerignore" else ".dockerignore")


def _requirement_candidates(g: _Gathered, ref: str, context: str) -> list[RequirementsFile]:
    exact = g.requirements.get(
        _join(context, ref.lstrip("/")) if ref.startswith("/") else _join(context, ref)
    )
    if exact is not None:
        return [exact]
    base = posixpath.basename(ref)
    prefix = "" if context in (".", "") else context.rstrip("/") + "/"
    return [
        rf
        for path, rf in sorted(g.requirements.items())
        if posixpath.basename(path) == base and path.startswith(prefix)
    ]


def _compose_builds(g: _Gathered) -> list[tuple[ComposeFile, str, str, str]]:
    """(compose file, service, dockerfile path, context) for services that build."""
    out: list[tuple[ComposeFile, str, str, str]] = []
    for cf in g.composes.values():
        for svc in cf.services:
            if svc.build_context is None or "://" in svc.build_context:
                continue
            context = _join(_dir(cf.path), svc.build_context)
            dockerfile = _join(context, svc.build_dockerfile or "Dockerfile")
            out.append((cf, svc.name, dockerfile, context))
    return out


def _installs(g: _Gathered) -> list[tuple[InstallCommand, str]]:
    """Every install command with the folder its relative paths are read from."""
    found: list[tuple[InstallCommand, str]] = []
    for path, df in g.dockerfiles.items():
        for stage in df.stages:
            for run in stage.runs:
                env = {e.name: e.value for e in run.env}
                for cmd in find_installs(
                    run.script, path=path, line=run.line, phase="build", env=env
                ):
                    found.append((cmd, _dir(path)))
    for path, cf in g.composes.items():
        for svc in cf.services:
            if svc.command:
                line = (
                    svc.line_of("command")
                    if "command" in dict(svc.field_lines)
                    else svc.line_of("entrypoint")
                )
                for cmd in find_installs(
                    svc.command, path=path, line=line or 1, phase="start", line_offsets=False
                ):
                    found.append((cmd, _dir(path)))
    for path, dc in g.devcontainers.items():
        root = posixpath.dirname(_dir(path)) if path.endswith("/devcontainer.json") else _dir(path)
        for _key, script, line in dc.commands:
            for cmd in find_installs(
                script, path=path, line=line or 1, phase="start", line_offsets=False
            ):
                found.append((cmd, root or "."))
    return found


def scan_container_files(
    files: Sequence[ProjectFile], *, watched: frozenset[str] | None = None
) -> tuple[list[Finding], list[Source], dict[str, JSONValue]]:
    """Findings, sources and facts for the container/build files among ``files``."""
    from agentguard.config import deps_policy
    from agentguard.rules.buildfiles import (
        check_context_copy,
        check_sdk_bounds,
        check_unlocked_installs,
    )
    from agentguard.rules.compose_rules import (
        check_compose_file,
        check_devcontainer,
        check_dockerfile_hardening,
    )

    watched = watched if watched is not None else deps_policy().watched
    g = gather(files)
    findings: list[Finding] = []
    builds = _compose_builds(g)

    # Dockerfiles: hardening, and AG212 for each build context it is used with.
    for path, df in g.dockerfiles.items():
        findings += check_dockerfile_hardening(df)
        contexts = sorted({ctx for _, _, d, ctx in builds if d == path} or {_dir(path)})
        for ctx in contexts:
            findings += check_context_copy(df, _ignore_for(g, path, ctx))

    # Compose services: working directory from the file, a devcontainer, or the Dockerfile.
    dev_workdirs: dict[tuple[str, str], tuple[str, str]] = {}
    for dc in g.devcontainers.values():
        if dc.service and dc.workspace_folder.value:
            for c in dc.compose_files:
                dev_workdirs[(_join(_dir(dc.path), c), dc.service)] = (
                    dc.workspace_folder.value,
                    f"workspaceFolder in {dc.path}",
                )
    for cf in g.composes.values():
        workdirs: dict[str, tuple[str | None, str]] = {}
        for svc in cf.services:
            if svc.working_dir is not None:
                workdirs[svc.name] = (svc.working_dir, "working_dir")
            elif (cf.path, svc.name) in dev_workdirs:
                workdirs[svc.name] = dev_workdirs[(cf.path, svc.name)]
            else:
                built = [d for c, s, d, _ in builds if c is cf and s == svc.name]
                bdf = g.dockerfiles.get(built[0]) if built else None
                wd = bdf.effective_workdir(bdf.final)[0] if bdf and bdf.final else None
                workdirs[svc.name] = (
                    (wd, f"WORKDIR in {built[0]}") if wd else (None, "unknown (set by the image)")
                )
        findings += check_compose_file(cf, workdirs)

    for dc in g.devcontainers.values():
        findings += check_devcontainer(dc)

    # Installs (AG120) and SDK bounds (AG121).
    installs = _installs(g)
    per_cmd: list[Finding] = []
    for cmd, context in installs:
        refs = {ref: _requirement_candidates(g, ref, context) for ref in cmd.requirement_files}
        per_cmd += check_unlocked_installs([cmd], refs, watched)
    findings += per_cmd
    decls = list(g.decls)
    for cmd, _ in installs:
        decls += [
            parse_requirement(p, path=cmd.path, line=cmd.line, origin="command")
            for p in cmd.packages
            if not p.startswith((".", "/", "-", "$")) and "://" not in p
        ]
    findings += check_sdk_bounds(decls, watched)
    return findings, g.sources, _facts(g)


def _facts(g: _Gathered) -> dict[str, JSONValue]:
    return {
        "dockerfiles": [
            {
                "path": df.path,
                "parser": df.parser,
                "stages": [
                    {"base": s.base, "name": s.name, "user": s.user, "workdir": s.workdir}
                    for s in df.stages
                ],
            }
            for df in g.dockerfiles.values()
        ],
        "compose_files": [
            {
                "path": cf.path,
                "services": [s.name for s in cf.services],
                "schema_valid": not cf.schema_errors,
            }
            for cf in g.composes.values()
        ],
        "devcontainers": [
            {
                "path": dc.path,
                "workspace_folder": dc.workspace_folder.value,
                "workspace_mount": dc.workspace_mount.origin if dc.workspace_mount else None,
            }
            for dc in g.devcontainers.values()
        ],
    }
