"""Dockerfiles, compose files, devcontainer.json, requirements: facts and sources.

:func:`gather` reads the files the project scan collected (:func:`wants_file` says which)
and :func:`join_build_files` joins them; the engine runs the build-file rules over the
result (:func:`agentguard.engine.project.scan_container_files`). Every file handled here
gets a :class:`Source`: ok, or failed with a stable ``error_code`` (a file that cannot be
parsed is never an empty result). Cross-file facts are joined here: a compose service's
working directory from the Dockerfile it builds or the devcontainer that opens it, the
``.dockerignore`` of a Dockerfile's build context, the requirements file an install
command names.
"""

from __future__ import annotations

import dataclasses
import posixpath
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agentguard.facts.project import BuildFileFacts as BuildFileFacts
from agentguard.facts.project_file import ProjectFile
from agentguard.findings import Source
from agentguard.inspect.project.install_facts import (
    InstallCommand,
    RequirementDecl,
    RequirementsFile,
    find_installs,
    parse_requirement,
    parse_requirements_file,
    pyproject_requirements,
)
from agentguard.inspect.project.kinds import TreeFacts, file_kind
from agentguard.inspect.project.lined import PARSE_FAILURES, DocumentError, document_error

# The reader of each kind is imported where a file of that kind is read: a project without
# a Dockerfile, a compose file or a devcontainer.json (a library, an action) does not build
# their records nor load their parsers (YAML, the compose schema, JSONC).
if TYPE_CHECKING:
    from agentguard.facts.agent_services import AgentService
    from agentguard.facts.compose import ComposeFile
    from agentguard.facts.devcontainer import DevcontainerFacts
    from agentguard.facts.dockerfile import DockerfileFacts
    from agentguard.facts.installs import ToolInstall
    from agentguard.facts.project import DockerIgnore

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
    # folder -> (lock file names, {package: locked versions}) from uv.lock/poetry.lock/pylock.toml
    locked: dict[str, tuple[str, dict[str, list[str]]]] = field(default_factory=dict)
    # locks not read yet (locks.read_folder_locks), with where their source goes in ``sources``
    lock_files: list[tuple[ProjectFile, str, int]] = field(default_factory=list)
    scripts: dict[str, str] = field(default_factory=dict)  # .devcontainer/*.sh by path
    gitignores: dict[str, str] = field(default_factory=dict)  # .gitignore files by path


def _failed(path: str, reason: str, code: str, remedy: str | None = None) -> Source:
    return Source.failed("file", path, reason, error_code=code, retryable=False, remedy=remedy)


_TEMPLATE_SUFFIXES = (".j2", ".jinja", ".jinja2", ".tmpl", ".tpl")


def _template(path: str, text: str) -> str | None:
    """Why a file that did not parse is a template (its name or its markers), or None."""
    low = path.lower()
    if low.endswith(_TEMPLATE_SUFFIXES):
        return f"a template ({low.rsplit('.', 1)[-1]})"
    if "{%" in text or "{{" in text:
        return "a template ({% %} / {{ }} markers)"
    return None


def _unparsed(f: ProjectFile, text: str, what: str, failed: Source, g: _Gathered) -> None:
    """A file that did not parse: a template is skipped with the reason (its rendered form
    is what runs), anything else is a failed source."""
    why = _template(f.path, text)
    if why is None:
        g.sources.append(failed)
        return
    g.sources.append(
        Source.skipped(
            "file",
            f.path,
            f"{why} that does not parse as {what} before rendering: not read; render it and "
            "inspect the result, or list it in `exclude`",
        )
    )


def _dockerfile(path: str, text: str) -> tuple[DockerfileFacts, str] | str:
    """The facts of a Dockerfile and how it was read, or why it could not be. A template
    (by name, or `{% %}` markers; `{{ }}` alone only when the plain read fails, since a
    `--format '{{.Id}}'` in a RUN is no template) is read best-effort, every branch kept."""
    from agentguard.inspect.project.dockerfile_facts import DockerfileError, build_facts
    from agentguard.inspect.project.templates import is_template, untemplate

    named = _template(path, "") is not None or "{%" in text
    if not named:
        try:
            df = build_facts(path, text)
            return df, f"Dockerfile ({df.parser} parser)"
        except DockerfileError as exc:
            if not is_template(path, text):
                return str(exc)
            error = str(exc)
    else:
        error = ""
    t = untemplate(text)
    try:
        df = build_facts(path, t.text)
    except DockerfileError as exc:
        return error or str(exc)
    how = (
        f"Dockerfile template read best-effort before rendering ({df.parser} parser): every "
        f"branch of its {t.branches} `{{% if %}}` blocks read, {t.values} `{{{{ }}}}` "
        "values unknown"
    )
    if t.unknown_lines:
        how += f"; {t.unknown_lines} lines of instructions from `{{{{ }}}}` unknown, not read"
    if t.not_followed:
        how += "; not followed: " + ", ".join(t.not_followed)
    return df, how


def _read_one(f: ProjectFile, kind: str, g: _Gathered) -> None:
    try:
        text = f.data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        g.sources.append(
            _failed(f.path, f"not UTF-8 text: {exc.reason} at byte {exc.start}", "not-utf8")
        )
        return
    if kind == "dockerfile":
        read = _dockerfile(f.path, text)
        if isinstance(read, str):
            failed = _failed(f.path, f"not a Dockerfile: {read}", "dockerfile-parse-error")
            _unparsed(f, text, "a Dockerfile", failed, g)
            return
        df, how = read
        g.dockerfiles[f.path] = df
        g.sources.append(Source.ok("file", f.path, how))
    elif kind == "compose":
        from agentguard.inspect.project.compose_facts import read_compose

        try:
            cf = read_compose(f.path, text)
        except DocumentError as exc:
            where = f" (line {exc.line})" if exc.line else ""
            _unparsed(f, text, "YAML", _failed(f.path, f"{exc}{where}", f"compose-{exc.code}"), g)
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
        from agentguard.inspect.project.devcontainer_facts import read_devcontainer

        try:
            dc = read_devcontainer(f.path, text)
        except DocumentError as exc:
            where = f" (line {exc.line})" if exc.line else ""
            failed = _failed(f.path, f"{exc}{where}", f"devcontainer-{exc.code}")
            _unparsed(f, text, "JSON", failed, g)
            return
        g.devcontainers[f.path] = dc
        g.sources.append(Source.ok("file", f.path, "devcontainer.json"))
    elif kind == "dockerignore":
        from agentguard.inspect.project.dockerignore import parse_dockerignore

        g.ignores[f.path] = parse_dockerignore(f.path, text)
        g.sources.append(Source.ok("file", f.path, ".dockerignore"))
    elif kind == "requirements":
        rf = parse_requirements_file(f.path, text)
        g.requirements[f.path] = rf
        g.decls.extend(rf.requirements)
        g.sources.append(Source.ok("file", f.path, "requirements file"))
    elif kind == "lock":  # read once the requirements say which are needed
        g.lock_files.append((f, text, len(g.sources)))
    elif kind == "pyproject":
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            # a project template (cookiecutter's `{{cookiecutter.package_name}}`): skipped
            failed = _failed(f.path, f"not valid TOML: {exc}", "pyproject-toml-error")
            _unparsed(f, text, "TOML", failed, g)
            return
        except PARSE_FAILURES as exc:
            err = document_error(exc)
            code = err.code if err.code in _BARE_CODES else f"pyproject-{err.code}"
            g.sources.append(_failed(f.path, str(err), code))
            return
        g.decls.extend(pyproject_requirements(f.path, text, data))
        g.sources.append(Source.ok("file", f.path, "pyproject.toml (requirements)"))


def gather(files: Sequence[ProjectFile]) -> _Gathered:
    g = _Gathered()
    for f in sorted(files, key=lambda f: f.path):
        kind = f.kind or file_kind(f.path)
        if kind is None:
            continue
        if not f.readable:  # its failed source is recorded by the reader
            if kind == "dockerignore":
                from agentguard.facts.project import DockerIgnore

                g.ignores[f.path] = DockerIgnore(f.path, (), readable=False)
            continue
        if kind == "devcontainer-script":
            g.scripts[f.path] = f.data.decode("utf-8", "replace")
            continue
        if kind == "gitignore":
            g.gitignores[f.path] = f.data.decode("utf-8", "replace")
            continue
        try:
            _read_one(f, kind, g)
        except PARSE_FAILURES as exc:  # this file's failure alone (a 4301-digit number...)
            _forget(f.path, g)
            err = document_error(exc)
            code = err.code if err.code in _BARE_CODES else f"{kind}-{err.code}"
            g.sources.append(_failed(f.path, str(err), code))
    if g.scripts:
        from agentguard.inspect.project.devcontainer_scripts import attach_scripts

        for path, dc in list(g.devcontainers.items()):
            g.devcontainers[path] = attach_scripts(dc, g.scripts)
            for _key, script, _text in g.devcontainers[path].scripts:
                g.sources.append(Source.ok("file", script, f"script run by {path}"))
    return g


_BARE_CODES = ("too-deep", "too-large")  # the same code whatever the file's kind


def _forget(path: str, g: _Gathered) -> None:
    """Drop what a file that failed half-way left (its failed source says it)."""
    for facts in (g.dockerfiles, g.composes, g.devcontainers, g.ignores, g.requirements):
        facts.pop(path, None)
    g.sources[:] = [s for s in g.sources if s.name != path]


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
    if g.dockerfiles:  # (`uv sync` in a RUN: whether the build has the lock to sync)
        from agentguard.inspect.project.uv_lock_state import lock_state
    locks = {f.path for f, _, _ in g.lock_files}
    for path, df in g.dockerfiles.items():
        for stage in df.stages:
            for run in stage.runs:
                env = {e.name: e.value for e in run.env}
                for cmd in find_installs(
                    run.script, path=path, line=run.line, phase="build", env=env
                ):
                    if cmd.tool == "uv sync":
                        state = lock_state(stage, _dir(path), locks, g.gitignores)
                        cmd = dataclasses.replace(cmd, lock_state=state)
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
        for _key, script_path, text in dc.scripts:  # the scripts those commands run
            for cmd in find_installs(text, path=script_path, line=1, phase="start"):
                found.append((cmd, root or "."))
    return found


def join_build_files(g: _Gathered, tree: TreeFacts | None) -> BuildFileFacts:
    builds = _compose_builds(g)
    dockerfiles = []
    for path, df in g.dockerfiles.items():
        contexts = sorted({ctx for _, _, d, ctx in builds if d == path} or {_dir(path)})
        dockerfiles.append((df, tuple((ctx, _ignore_for(g, path, ctx)) for ctx in contexts)))

    # Compose services: working directory from the file, a devcontainer, or the Dockerfile.
    dev_workdirs: dict[tuple[str, str], tuple[str, str]] = {}
    for dc in g.devcontainers.values():
        if dc.service and dc.workspace_folder.value:
            for c in dc.compose_files:
                dev_workdirs[(_join(_dir(dc.path), c), dc.service)] = (
                    dc.workspace_folder.value,
                    f"workspaceFolder in {dc.path}",
                )
    composes = []
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
        composes.append((cf, workdirs))

    installs = _installs(g)
    decls = list(g.decls)
    for cmd, _ in installs:
        decls += [
            parse_requirement(p, path=cmd.path, line=cmd.line, origin="command")
            for p in cmd.packages
            if not p.startswith((".", "/", "-", "$")) and "://" not in p
        ]
    return BuildFileFacts(
        dockerfiles=tuple(dockerfiles),
        composes=tuple(composes),
        devcontainers=tuple(g.devcontainers.values()),
        installs=tuple(
            (cmd, {ref: _requirement_candidates(g, ref, ctx) for ref in cmd.requirement_files})
            for cmd, ctx in installs
        ),
        decls=tuple(decls),
        tool_installs=tuple(_tool_installs(g)),
        tree=tree,
        locked=dict(g.locked),
        agent_services=_agent_services(g, builds),
    )


def _agent_services(
    g: _Gathered, builds: list[tuple[ComposeFile, str, str, str]]
) -> tuple[AgentService, ...]:
    """The containers that start an agent app (none without a compose file or a Dockerfile:
    its reader is then not imported)."""
    if not g.composes and not g.dockerfiles:
        return ()
    from agentguard.inspect.project.agent_services import agent_services

    return agent_services(g.composes.values(), g.dockerfiles, builds)


def _tool_installs(g: _Gathered) -> list[ToolInstall]:
    """npm/npx/curl installs in build steps and start commands (AG130)."""
    if not g.dockerfiles and not g.composes and not g.devcontainers:
        return []  # (their reader is not imported)
    from agentguard.inspect.project.tool_installs import tool_installs_of

    return tool_installs_of(g.dockerfiles, g.composes, g.devcontainers)
