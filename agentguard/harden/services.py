"""The services to harden, built from what the target says about itself.

Pure builders (no I/O): an image's config, a container's `docker inspect` record, a
compose service body (:mod:`.compose_service`), a devcontainer, a Dockerfile. Each keeps what the agent needs to
start (image or build, entrypoint and command, environment, named volumes) and drops
what the hardening replaces, saying so in the service's notes. Secret values are dropped
here, at the first sight: a variable that looks like a secret is passed through by name.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from agentguard.facts.host_paths import is_docker_socket
from agentguard.harden.model import EnvVar, HardenOptions, NamedVolume, ServiceSpec
from agentguard.inspect.facts import ImageConfig
from agentguard.redact import mask_value
from agentguard.rules.mounts import workdir_relation
from agentguard.secret_text import classify, scan_text, value_format

# environment set by the engine or the image's base, never worth carrying over
_RUNTIME_ENV = frozenset({"PATH", "HOSTNAME", "HOME", "TERM", "container"})
_SCRIPT_SUFFIXES = (".py", ".js", ".mjs", ".cjs", ".ts", ".sh", ".rb", ".pl", ".jar")
# compose keys carried over unchanged (they do not widen what the agent can reach)
PASSTHROUGH_KEYS = (
    "depends_on",
    "labels",
    "restart",
    "stop_signal",
    "stop_grace_period",
    "healthcheck",
    "init",
    "ports",
    "expose",
    "secrets",  # compose secrets are files on a tmpfs at /run/secrets: the right way in
)


def env_vars(pairs: Iterable[tuple[str, str | None]]) -> tuple[EnvVar, ...]:
    """Variables to set: values kept only when they are neither secret nor interpolated away."""
    out: dict[str, EnvVar] = {}
    for name, value in pairs:
        if not name or name in _RUNTIME_ENV:
            continue
        # `${NAME}` is the caller's value: pass it through by name, never the literal text
        interpolated = value is not None and "$" in value
        if value is None or interpolated or classify(name, value) is not None:
            out[name] = EnvVar(name)  # pass through by name; a secret's value is dropped here
        else:
            out[name] = EnvVar(name, value)
    return tuple(out.values())


def rewrite_relative(
    argv: Sequence[str] | None, workdir: str | None
) -> tuple[tuple[str, ...] | None, list[str]]:
    """Script paths relative to the image's working directory, made absolute.

    The hardened container starts in an empty working directory, so ``python agent.py``
    would no longer find ``/app/agent.py``.
    """
    if argv is None or not workdir or workdir == "/":
        return (tuple(argv) if argv is not None else None), []
    out: list[str] = []
    changed: list[str] = []
    for arg in argv:
        relative = not arg.startswith(("-", "/", "$")) and "=" not in arg
        if relative and (arg.endswith(_SCRIPT_SUFFIXES) or arg.startswith("./")):
            new = posixpath.normpath(posixpath.join(workdir, arg))
            changed.append(f"{arg} -> {new}")
            out.append(new)
        else:
            out.append(arg)
    return tuple(out), changed


def _redacted(argv: Sequence[str] | None) -> bool:
    return argv is not None and any(mask_value() in a for a in argv)


def _runs_python_module(argv: Sequence[str]) -> bool:
    for i, arg in enumerate(argv[:-1]):
        if posixpath.basename(arg).startswith("python") and argv[i + 1] == "-m":
            return True
    return False


def holds_secret(value: Any) -> bool:
    """True when a command, label or option holds something that looks like a secret."""
    if isinstance(value, Mapping):
        return any(holds_secret(k) or holds_secret(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return any(holds_secret(v) for v in value)
    if not isinstance(value, str):
        return False
    return bool(scan_text(value)) or any(value_format(w) for w in value.split())


def service_from_image(
    name: str, image: str, cfg: ImageConfig, secret_names: Iterable[str] = ()
) -> ServiceSpec:
    """An image run as it is, in the hardened container."""
    notes: list[str] = []
    workdir = cfg.workdir or None
    entry, cmd = cfg.entrypoint, cfg.cmd
    new_entry: tuple[str, ...] | None = None
    new_cmd: tuple[str, ...] | None = None
    if _redacted(entry) or _redacted(cmd):
        notes.append(
            "the image's command holds a redacted value, so it is not repeated here; if it "
            f"uses paths relative to {workdir or '/'}, start it with absolute paths"
        )
    else:
        e2, ce = rewrite_relative(entry, workdir)
        c2, cc = rewrite_relative(cmd, workdir)
        if ce or cc:
            new_entry, new_cmd = (e2 if ce else None), c2
            notes.append(
                "the image's command used paths relative to its working directory "
                f"{workdir}; rewritten: {'; '.join(ce + cc)}"
            )
    env: list[EnvVar] = []
    if workdir and workdir != "/" and _runs_python_module((*(entry or ()), *(cmd or ()))):
        env.append(EnvVar("PYTHONPATH", workdir))
        notes.append(
            f"`python -m` found its package in the working directory {workdir}; PYTHONPATH="
            f"{workdir} keeps it importable from the empty working directory"
        )
    secrets = sorted(set(secret_names))
    if secrets:
        notes.append(
            f"the image bakes {', '.join(secrets)}: passed through at run time here, but the "
            "value stays in the image until it is rebuilt without it (rotate it)"
        )
    return ServiceSpec(
        name=name,
        image=image,
        entrypoint=new_entry,
        command=new_cmd,
        env=(*env, *(EnvVar(n) for n in secrets)),
        origin=f"image {image}",
        notes=tuple(notes),
    )


def image_config_from_attrs(attrs: Mapping[str, Any]) -> ImageConfig:
    """The parts of an engine image record (``docker image inspect``) harden uses."""
    cfg = attrs.get("Config") if isinstance(attrs.get("Config"), Mapping) else {}
    assert isinstance(cfg, Mapping)

    def argv(key: str) -> tuple[str, ...] | None:
        value = cfg.get(key)
        return tuple(str(v) for v in value) if isinstance(value, list) else None

    env = tuple(
        (str(e).partition("=")[0], str(e).partition("=")[2]) for e in (cfg.get("Env") or [])
    )
    return ImageConfig(
        user=cfg.get("User") if isinstance(cfg.get("User"), str) else None,
        workdir=cfg.get("WorkingDir") if isinstance(cfg.get("WorkingDir"), str) else None,
        env=env,
        entrypoint=argv("Entrypoint"),
        cmd=argv("Cmd"),
    )


def service_from_container(
    attrs: Mapping[str, Any], image_cfg: ImageConfig | None, opts: HardenOptions
) -> ServiceSpec:
    """A container re-run hardened: its image, its command, its own environment."""
    cfg = attrs.get("Config") if isinstance(attrs.get("Config"), Mapping) else {}
    assert isinstance(cfg, Mapping)
    name = str(attrs.get("Name") or attrs.get("Id") or "agent").lstrip("/")
    image = cfg.get("Image") if isinstance(cfg.get("Image"), str) else None
    inherited = set(image_cfg.env) if image_cfg is not None else set()
    own: list[tuple[str, str | None]] = []
    for item in cfg.get("Env") or []:
        key, _, value = str(item).partition("=")
        if (key, value) not in inherited:
            own.append((key, value))
    workdir = cfg.get("WorkingDir") or (image_cfg.workdir if image_cfg else None) or None
    entry = tuple(cfg["Entrypoint"]) if isinstance(cfg.get("Entrypoint"), list) else None
    cmd = tuple(cfg["Cmd"]) if isinstance(cfg.get("Cmd"), list) else None
    notes: list[str] = []
    if holds_secret(entry) or holds_secret(cmd):
        entry = cmd = None
        notes.append("the container's command holds a literal secret: not repeated here")
    e2, ce = rewrite_relative(entry, workdir)
    c2, cc = rewrite_relative(cmd, workdir)
    if ce or cc:
        notes.append(f"rewritten relative paths: {'; '.join(ce + cc)}")
    volumes, dropped = _container_volumes(attrs.get("Mounts"), opts)
    notes += dropped
    return ServiceSpec(
        name=name,
        image=image,
        entrypoint=e2,
        command=c2,
        env=env_vars(own),
        volumes=volumes,
        origin=f"container {name}",
        notes=tuple(notes),
    )


def _container_volumes(raw: Any, opts: HardenOptions) -> tuple[tuple[NamedVolume, ...], list[str]]:
    kept: list[NamedVolume] = []
    notes: list[str] = []
    for m in raw if isinstance(raw, list) else []:
        if not isinstance(m, Mapping):
            continue
        kind = m.get("Type")
        # a volume is kept by its name; its Source is the engine's data folder, a host path
        source = m.get("Name") if kind == "volume" else m.get("Source")
        dest = str(m.get("Destination") or "")
        keep, why = keep_volume(str(kind), source, dest, opts)
        if keep and isinstance(source, str):
            kept.append(NamedVolume(source, dest, not bool(m.get("RW", True))))
        else:
            notes.append(f"dropped the {kind} mount {source or '?'} -> {dest} ({why})")
    return tuple(kept), notes


# what the engine accepts as a volume name; anything else could carry `,key=value` into a
# `--mount` field list and choose another mount
_VOLUME_NAME = re.compile(r"[a-zA-Z0-9][a-zA-Z0-9_.-]*\Z")
_UNSAFE_TARGET = re.compile(r"[,\"'=\s]")


def keep_volume(kind: str, source: Any, dest: str, opts: HardenOptions) -> tuple[bool, str]:
    if kind != "volume" or not isinstance(source, str) or not source:
        return False, (
            "a host folder or an anonymous mount; if the agent needs it, pass "
            f"--allow-mount HOST:PATH with a PATH outside {opts.workdir} (mounted read-only)"
        )
    if is_docker_socket(source) or is_docker_socket(dest):
        return False, "the Docker socket"
    if dest and workdir_relation(dest, opts.workdir) is not None:
        return False, f"it would cover the working directory {opts.workdir}"
    if not _VOLUME_NAME.match(source):
        return False, "not a volume name the engine accepts"
    if _UNSAFE_TARGET.search(dest) or not dest.startswith("/"):
        return False, "its target is not a plain absolute path"
    return True, ""


def rebase(path: str, base: Path, out_dir: Path) -> str:
    """A path written relative to ``base``, rewritten relative to ``out_dir``."""
    if "://" in path or path.startswith(("/", "$", "~")):
        return path
    target = (base / path).resolve()
    return os.path.relpath(target, out_dir.resolve())


def service_from_build(
    name: str, context: Path, dockerfile: Path, out_dir: Path, origin: str
) -> ServiceSpec:
    """A Dockerfile (or a devcontainer build) with no compose file: built from the output folder."""
    ctx = os.path.relpath(context.resolve(), out_dir.resolve())
    build: dict[str, Any] = {"context": ctx}
    rel_df = os.path.relpath(dockerfile.resolve(), context.resolve())
    if rel_df != "Dockerfile":
        build["dockerfile"] = rel_df
    return ServiceSpec(name=name, image=None, build=build, origin=origin)
