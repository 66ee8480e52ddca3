"""What harden reads from the project besides inspect's facts: where the agent's code came
from (a compose service, a Dockerfile), and the devcontainer documents to rewrite.

The code came from the project when the checkout is bind-mounted at the service's working
directory, or when its Dockerfile copies the whole context (``COPY . DIR``) to the working
directory. Then :func:`~agentguard.harden.code.attach_code` decides what travels.
"""

from __future__ import annotations

import dataclasses
import os
import posixpath
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agentguard import safeio
from agentguard.findings import Finding, Source
from agentguard.harden.code import (
    MAX_DOCKERFILE,
    Start,
    attach_code,
    code_target,
    read_dockerfile,
)
from agentguard.harden.code_lock import plan_install
from agentguard.harden.model import HardenOptions, ServiceSpec

_MOVED = "the working directory moves from "  # the note attach_code makes obsolete


def _build_paths(build: Any, base: Path) -> tuple[Path, Path] | None:
    if isinstance(build, str):
        return base / build, base / build / "Dockerfile"
    if isinstance(build, Mapping):
        ctx = base / str(build.get("context", "."))
        return ctx, ctx / str(build.get("dockerfile", "Dockerfile"))
    return None


def _bind_at(body: Mapping[str, Any], workdir: str) -> tuple[str, str] | None:
    """(host source, text) of a bind mount at the working directory."""
    from agentguard.inspect.project.compose_facts import parse_short_volume

    for v in body.get("volumes") or []:
        if isinstance(v, str):
            kind, source, target, _ro = parse_short_volume(v)
            text = v
        elif isinstance(v, Mapping):
            kind, source, target = str(v.get("type", "volume")), v.get("source"), v.get("target")
            text = f"{source}:{target}"
        else:
            continue
        bind = kind == "bind" and isinstance(source, str) and isinstance(target, str)
        if bind and posixpath.normpath(str(target)) == workdir:
            return str(source), text
    return None


def _drop_moved(svc: ServiceSpec) -> ServiceSpec:
    if svc.code is None:
        return svc
    return dataclasses.replace(svc, notes=tuple(n for n in svc.notes if not n.startswith(_MOVED)))


def _outside(svc: ServiceSpec, what: str, folder: Path, root: Path | None) -> ServiceSpec | None:
    """The service with a note when ``folder`` (every link resolved) is outside the project
    ``root``: a host folder outside the project is never carried into an image or mounted
    (None: it is inside, or there is no project to judge by)."""
    if root is None or safeio.inside(folder, root):
        return None
    note = (
        f"{what} is {os.path.realpath(folder)}, outside the project: it is not carried into "
        "the hardened image nor mounted; if the agent needs data from there, pass "
        "--allow-mount HOST:PATH (read-only, outside the working directory)"
    )
    return dataclasses.replace(svc, notes=(*svc.notes, note))


def compose_code(
    svc: ServiceSpec,
    body: Mapping[str, Any],
    compose_dir: Path,
    opts: HardenOptions,
    root: Path | None = None,
) -> ServiceSpec:
    """``root``: the project; code is carried only from a folder inside it."""
    paths = _build_paths(body.get("build"), compose_dir)
    start: Start | None = read_dockerfile(paths[1]) if paths else None
    wd = body.get("working_dir")
    workdir = posixpath.normpath(wd) if isinstance(wd, str) else (start.workdir if start else None)
    if workdir is None:
        return svc
    bind = _bind_at(body, workdir)
    if bind is not None:
        source, text = bind
        host = Path(os.path.expanduser(source))
        host = host if host.is_absolute() else compose_dir / host
        refused = _outside(svc, f"the bind mount {text}", host, root)
        if refused is not None:
            return _drop_moved(refused)
        built_by = _text(paths[1]) if paths is not None else None
        out = attach_code(
            svc,
            host_dir=host,
            source_dir=workdir,
            how=f"bind mount {text}",
            image_start=start,
            opts=opts,
            deps=plan_install(host, built_by, None, workdir, code_target(workdir, opts)),
        )
        if out.code is not None and paths is not None and out.code.base_image:
            out = dataclasses.replace(
                out,
                notes=(
                    *out.notes,
                    f"the hardened image is built FROM {out.code.base_image}, which your compose "
                    "file builds: build it first (`docker compose build`)",
                ),
            )
        if start is not None and start.copy_all == workdir and paths is not None:
            out = dataclasses.replace(
                out,
                notes=(
                    *out.notes,
                    f"its image is built with `COPY . {workdir}`: the whole project is still in "
                    f"the image at {workdir} (outside the working directory, read-only); narrow "
                    "that COPY in your Dockerfile the way the hardened Dockerfile copies",
                ),
            )
        return _drop_moved(out)
    if paths is not None and start is not None:
        return _drop_moved(dockerfile_code(svc, paths[0], paths[1], opts, start, root))
    return svc


def dockerfile_code(
    svc: ServiceSpec,
    context: Path,
    dockerfile: Path,
    opts: HardenOptions,
    start: Start | None = None,
    root: Path | None = None,
) -> ServiceSpec:
    """A Dockerfile that copies the whole context to its working directory (``root``: the
    project; a context outside it is not carried)."""
    refused = _outside(svc, "the build context", context, root)
    if refused is not None:
        return refused
    start = start or read_dockerfile(dockerfile)
    if start is None or start.copy_all is None or start.copy_lines is None:
        return svc
    if start.copy_all != start.workdir:
        return svc
    text = _text(dockerfile)
    if text is None:
        return svc
    deps = dataclasses.replace(
        plan_install(
            context, text, start.copy_lines, start.copy_all, code_target(start.copy_all, opts)
        ),
        dockerfile=str(dockerfile.resolve()),
    )
    return attach_code(
        svc,
        host_dir=context,
        source_dir=start.copy_all,
        how=f"COPY . {start.copy_all}",
        image_start=start,
        opts=opts,
        dockerfile=(text, *start.copy_lines),
        keep_in_image=start.run_after_copy and not deps.narrowable,
        deps=deps,
    )


def _text(dockerfile: Path) -> str | None:
    try:
        return safeio.read_text(dockerfile, cap=MAX_DOCKERFILE)
    except (OSError, UnicodeDecodeError):
        return None


def devcontainer_docs(
    root: Path, project: Mapping[str, Any], sources: list[Source]
) -> list[tuple[str, Mapping[str, Any]]]:
    """The devcontainers that are not compose-based, parsed (the writer rewrites them)."""
    from agentguard.inspect.project.jsonc import load_jsonc
    from agentguard.inspect.project.lined import DocumentError

    containers = project.get("containers")
    out: list[tuple[str, Mapping[str, Any]]] = []
    for dc in (
        (containers or {}).get("devcontainers") or [] if isinstance(containers, Mapping) else []
    ):
        rel = str(dc["path"])
        try:
            doc = load_jsonc(safeio.read_text(root / rel, root=root)).value
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
            continue
        if isinstance(doc, dict) and "dockerComposeFile" not in doc:
            out.append((rel, doc))
    return out


def container_code(svc: ServiceSpec, attrs: Mapping[str, Any], opts: HardenOptions) -> ServiceSpec:
    """A container whose working directory is a bind mount of a host folder (the engine's
    host: this one, for a local engine)."""
    cfg = attrs.get("Config") if isinstance(attrs.get("Config"), Mapping) else {}
    workdir = cfg.get("WorkingDir") if isinstance(cfg, Mapping) else None
    if not isinstance(workdir, str) or not workdir:
        return svc
    for m in attrs.get("Mounts") or []:
        if not isinstance(m, Mapping) or m.get("Type") != "bind":
            continue
        source, dest = m.get("Source"), m.get("Destination")
        if isinstance(source, str) and posixpath.normpath(str(dest)) == posixpath.normpath(workdir):
            return _drop_moved(
                attach_code(
                    svc,
                    host_dir=Path(source),
                    source_dir=posixpath.normpath(workdir),
                    how=f"bind mount {source}:{dest}",
                    image_start=None,
                    opts=opts,
                    deps=plan_install(
                        Path(source),
                        None,
                        None,
                        posixpath.normpath(workdir),
                        code_target(posixpath.normpath(workdir), opts),
                    ),
                )
            )
    return svc


def engine_texts(
    root: Path, project: Mapping[str, Any], findings: Sequence[Finding], sources: list[Source]
) -> dict[str, str]:
    """The Codex/Gemini configuration files and the files their findings point at (command
    lines, workflows), read as the scanner reads: inside the project, no link, capped."""
    from agentguard.harden.engines import engine_finding
    from agentguard.inspect.project.walk import NotRegular, TooLarge, read_candidate

    policies = project.get("engine_policies")
    wanted = {
        str(p.get("path"))
        for p in (policies if isinstance(policies, list) else [])
        if isinstance(p, Mapping)
        and str(p.get("label", "")).startswith(("config.toml", "settings.json"))
    }
    wanted |= {f.locations[0].path or "" for f in findings if engine_finding(f) and f.locations}
    wanted.discard("")
    out: dict[str, str] = {}
    top = os.path.realpath(root)
    for rel in sorted(wanted):
        path = os.path.join(top, rel)
        try:
            inside = os.path.realpath(path).startswith(top + os.sep)
            if not inside or os.path.islink(path) or ".." in rel.split("/"):
                raise OSError("not a file inside the project (a link is not followed)")
            out[rel] = read_candidate(path).decode("utf-8")
        except (OSError, UnicodeDecodeError, NotRegular, TooLarge) as exc:
            why = {NotRegular: "not a regular file", TooLarge: "too large"}.get(type(exc), str(exc))
            sources.append(
                Source.failed(
                    "file",
                    rel,
                    f"cannot read the agent engine's file to harden: {why}",
                    error_code="harden-input-unreadable",
                    retryable=False,
                )
            )
    return out
