"""The hardened Dockerfile and the ``--code-mount`` mounts that carry the agent's code.

Pure renderers over a :class:`~agentguard.harden.model.CodeSpec`. The Dockerfile is either
the original with its ``COPY . DIR`` narrowed to the code, or ``FROM`` the service's image
with the code copied in; either way nothing else of the project enters the image. It is
built from the project folder (``docker-run.sh`` builds it before it runs).
"""

from __future__ import annotations

import json
import os
import posixpath
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from agentguard.harden.code import hardened_tag
from agentguard.harden.model import CodeSpec, DepsInstall, HardenOptions, ServiceSpec

BASE_ARG = "AGENT_BASE_IMAGE"


def dockerfile_name(svc: ServiceSpec, single: bool) -> str:
    return "Dockerfile.hardened" if single else f"Dockerfile.{svc.name}.hardened"


def _copies(code: CodeSpec) -> list[str]:
    return [
        "COPY " + json.dumps([e, posixpath.join(code.target, e)], ensure_ascii=False)
        for e in code.entries
    ]


def render_dockerfile(
    svc: ServiceSpec, *, header: Sequence[str], python_path: bool, user: str, workdir: str
) -> str:
    code = svc.code
    assert code is not None
    head = [f"# {h}" if h else "#" for h in header]
    deps = code.deps
    inputs = deps.build_inputs if deps is not None else ()
    carried = [
        f"# only the agent's code ({', '.join(code.entries)}); docs, .env and .git stay out",
        *_copies(code),
    ]
    if inputs:
        carried += [
            "# the files the RUN steps below read, and nothing else of the project",
            *(
                "COPY " + json.dumps([f, posixpath.join(code.source_dir, f)], ensure_ascii=False)
                for f in inputs
            ),
        ]
    if python_path:
        carried.append(f"ENV PYTHONPATH={code.target}")
    install = _install_lines(deps)
    # the same defaults the run configuration sets, so the image alone is not run as root
    tail = [f"WORKDIR {workdir}", f"USER {user}"]
    if code.dockerfile is not None:
        text, first, last = code.dockerfile
        replaced = deps.replaces if deps is not None else ()
        body: list[str] = []
        for no, line in enumerate(text.splitlines(), 1):
            span = next((r for r in replaced if r[0] <= no <= r[1]), None)
            if span is not None:
                body += install if span == replaced[0] and no == span[0] else []
            elif no == first:
                body += [*(install if not replaced else []), *carried]
            elif not first < no <= last:
                body.append(line)
        return "\n".join([*head, *body, *tail]) + "\n"
    if code.base_image is not None:
        base = [f"FROM {code.base_image}"]
    else:
        base = [
            f"# the original service builds its image: build it, then pass it as {BASE_ARG}",
            f"ARG {BASE_ARG}",
            f"FROM ${{{BASE_ARG}}}",
        ]
    return "\n".join([*head, *base, *install, *carried, *tail]) + "\n"


def _install_lines(deps: DepsInstall | None) -> list[str]:
    if deps is None or not deps.lines:
        return []
    return [f"# the agent's dependencies, from {deps.lock} (nothing resolved here)", *deps.lines]


def context_from(out: Path, code: CodeSpec) -> str:
    """The build context (the project folder) relative to the output folder."""
    return os.path.relpath(code.host_dir, os.path.abspath(out))


def build_line(tag: str, dockerfile: str, context: str, code: CodeSpec) -> list[str]:
    argv = ["docker", "build", "--quiet", "--tag", tag, "--file", dockerfile]
    if code.base_image is None and code.dockerfile is None:
        argv += ["--build-arg", f"{BASE_ARG}=${{AGENT_IMAGE:?build the original image first}}"]
    return [*argv, context]


def code_mounts(code: CodeSpec) -> list[tuple[str, str]]:
    """(host, container) read-only bind mounts, one per carried entry (``--code-mount``)."""
    return [(os.path.join(code.host_dir, e), posixpath.join(code.target, e)) for e in code.entries]


def uses_mounts(svc: ServiceSpec, opts: HardenOptions) -> bool:
    return svc.code is not None and opts.code_mount


@dataclass(frozen=True)
class CodeRun:
    """How one service's code reaches the hardened container, for every writer."""

    tag: str  # the hardened image (built from the Dockerfile)
    dockerfile: str  # its file name in the output folder
    context: str  # the project folder, relative to the output folder
    dockerfile_from_context: str  # the Dockerfile, relative to the context (compose)
    mounts: tuple[tuple[str, str], ...]  # --code-mount: (host, container), read-only
    build: tuple[str, ...] | None  # the script's `docker build` line (no --code-mount)
    base_arg: bool  # the Dockerfile takes the original image as a build argument


def code_run(svc: ServiceSpec, opts: HardenOptions, dockerfile: str) -> CodeRun:
    code = svc.code
    assert code is not None
    tag = hardened_tag(svc)
    context = context_from(opts.out, code)
    mounts = tuple(code_mounts(code)) if opts.code_mount else ()
    return CodeRun(
        tag=tag,
        dockerfile=dockerfile,
        context=context,
        dockerfile_from_context=os.path.relpath(
            os.path.join(os.path.abspath(opts.out), dockerfile), code.host_dir
        ),
        mounts=mounts,
        build=None if mounts else tuple(build_line(tag, dockerfile, context, code)),
        base_arg=code.base_image is None and code.dockerfile is None,
    )
