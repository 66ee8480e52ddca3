"""The pip-tools backend (``--backend pip-tools``): `pip-compile --generate-hashes` in a
scratch folder, read as the uv backend's output is (:mod:`agentguard.lock.backend`).
Imported only when that backend is asked for."""

from __future__ import annotations

import os
import platform
import sys

from agentguard import redact
from agentguard.errors import UsageError
from agentguard.lock import children
from agentguard.lock.backend import (
    OUTPUT_FLAGS,
    Resolution,
    ResolveRequest,
    default_index_urls,
    index_flags,
    run_resolver,
    scratch_inputs,
)
from agentguard.lock.children import own_module
from agentguard.lock.graph import LockedPackage
from agentguard.lock.requirements_text import parse_requirements_lock
from agentguard.lock.resolver_errors import classify as _classify
from agentguard.lock.urls import clean_url
from agentguard.scratch import scratch_folder


def resolve_pip_tools(req: ResolveRequest) -> Resolution:
    try:
        import piptools  # type: ignore[import-not-found, unused-ignore]  # noqa: F401
    except ImportError:
        raise UsageError(
            "--backend pip-tools needs pip-tools: pip install 'agentguard[pip-tools]'"
        ) from None
    env = children.resolver_env()
    # See the indexes we were told, not the machine's pip.conf.
    env["PIP_CONFIG_FILE"] = os.devnull
    cmd = own_module(sys.executable, "piptools", "compile", "requirements.in", "--no-config")
    cmd += [
        *OUTPUT_FLAGS,
        "--strip-extras",
        *index_flags(req, "--index-url", env, "PIP_INDEX_URL"),
    ]
    pip_args = ["--only-binary :all:"] if req.only_binary else []
    if req.exclude_newer:
        pip_args.append(f"--uploaded-prior-to {req.exclude_newer}")
    if pip_args:
        cmd += ["--pip-args", " ".join(pip_args)]
    pins, index_urls, find_links, raw_version = _compile(req, cmd, env)
    version = "pip-compile " + raw_version.rsplit(" ", 1)[-1] if raw_version else "pip-compile"
    if not index_urls and not req.no_index:
        index_urls = [clean_url(req.index_url)] if req.index_url else list(default_index_urls())
    shown = tuple(redact.url(a) for a in ("pip-compile", *cmd[5:]))
    return Resolution(
        tuple(pins), tuple(index_urls), tuple(find_links), version, False, shown, this_environment()
    )


def this_environment() -> dict[str, str]:
    """The environment pip-compile resolves for: the interpreter that runs it (this one)."""
    return {
        "python_version": f"{sys.version_info.major}.{sys.version_info.minor}",
        "sys_platform": sys.platform,
        "platform_machine": platform.machine(),
    }


def _compile(
    req: ResolveRequest, cmd: list[str], env: dict[str, str]
) -> tuple[list[LockedPackage], list[str], list[str], str]:
    """Run one resolver command in a scratch folder holding requirements.in (and the
    previous lock as requirements.txt: both resolvers prefer the pins already there), and
    ask the resolver its version there too (never in the folder agentguard was started
    in, which may be the checkout)."""
    with scratch_folder("agentguard-lock-") as tmpdir:
        out = scratch_inputs(req, tmpdir)
        proc = run_resolver(cmd, tmpdir, env, req.deadline)
        if proc.returncode != 0:
            raise _classify(proc.stderr)
        pins, index_urls, find_links = parse_requirements_lock(out.read_text(encoding="utf-8"))
        asked = own_module(sys.executable, "piptools", "--version")
        version = run_resolver(asked, tmpdir, env, req.deadline).stdout.strip()
    # What is written and shown of an index: never its login or a token.
    return pins, [clean_url(u) for u in index_urls], [clean_url(u) for u in find_links], version
