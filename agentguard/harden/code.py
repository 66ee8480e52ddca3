"""The agent's code travels, the project does not.

When the original container got its code from the project -- the checkout bind-mounted at
the working directory, or ``COPY . DIR`` with the working directory there -- the hardened
working directory (an empty tmpfs) no longer holds it, and ``sh agent.sh`` or
``python -m pkg`` would not start. This module works out which entries of the project the
start command needs (the script or package it names; for Node its ``package.json``,
installed ``node_modules`` and the files the script loads by a relative path), where they go (the old place when it is outside the new working
directory, else :data:`~agentguard.harden.model.CODE_DIR`), and rewrites the command's
relative paths and ``PYTHONPATH`` to match. Everything else of the project (docs, ``.env``,
``.git``) stays behind.

Reads: the project folder's entries (``lstat`` only: a symlink is never carried) and the
Dockerfile's start command. The writers turn a :class:`CodeSpec` into a hardened
Dockerfile or read-only bind mounts (``--code-mount``).
"""

from __future__ import annotations

import dataclasses
import json
import posixpath
import re
import shlex
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentguard import safeio
from agentguard.harden.code_lock import instructions
from agentguard.harden.model import (
    CODE_DIR,
    CodeSpec,
    DepsInstall,
    EnvVar,
    HardenOptions,
    ServiceSpec,
)
from agentguard.harden.node_requires import required_files
from agentguard.rules.mounts import workdir_relation

SCRIPT_SUFFIXES = (".py", ".js", ".mjs", ".cjs", ".ts", ".sh", ".rb", ".pl", ".jar")
_NODE_SUFFIXES = (".js", ".mjs", ".cjs", ".ts")
NODE_DEPS = ("package.json", "package-lock.json", "node_modules")
_NEVER = frozenset({".env", ".git", ".ssh", ".aws", ".docker", "docs", ".claude", "CLAUDE.md"})
MAX_DOCKERFILE = 1 << 20


@dataclass(frozen=True)
class Start:
    """A Dockerfile's last stage, as far as starting the agent goes."""

    entrypoint: list[str] | None
    cmd: list[str] | None
    workdir: str | None
    copy_all: str | None  # the destination of ``COPY . DEST`` (absolute), if any
    copy_lines: tuple[int, int] | None  # its first and last 1-based line numbers
    run_after_copy: bool = False  # a RUN follows it: the build may need the whole project


def _exec_form(rest: str) -> list[str]:
    if rest.startswith("["):
        try:
            value = json.loads(rest)
        except ValueError:
            value = None
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return list(value)
    return ["/bin/sh", "-c", rest]


def dockerfile_start(text: str) -> Start:
    """ENTRYPOINT, CMD, WORKDIR and a whole-context COPY of the last stage (no I/O)."""
    entry: list[str] | None = None
    cmd: list[str] | None = None
    workdir: str | None = None
    copy_all: str | None = None
    copy_lines: tuple[int, int] | None = None
    run_after = False
    for first, no, word, rest in instructions(text):
        if word == "FROM":
            entry = cmd = workdir = copy_all = None
            copy_lines = None
            run_after = False
        elif word == "ENTRYPOINT":
            entry, cmd = _exec_form(rest), None  # a new ENTRYPOINT resets CMD
        elif word in ("RUN", "ONBUILD") and copy_all is not None:
            run_after = True
        elif word == "CMD":
            cmd = _exec_form(rest)
        elif word == "WORKDIR" and rest:
            workdir = posixpath.normpath(posixpath.join(workdir or "/", rest))
        elif word in ("COPY", "ADD"):
            args = [a for a in shlex.split(rest) if not a.startswith("--")] if rest else []
            if len(args) == 2 and args[0] in (".", "./"):
                copy_all = posixpath.normpath(posixpath.join(workdir or "/", args[1]))
                copy_lines = (first, no)
                run_after = False
    return Start(entry, cmd, workdir, copy_all, copy_lines, run_after)


def read_dockerfile(path: Path) -> Start | None:
    try:
        if not stat.S_ISREG(path.lstat().st_mode):
            return None
        return dockerfile_start(safeio.read_text(path, cap=MAX_DOCKERFILE))
    except (OSError, UnicodeDecodeError):
        return None


def _is_script(arg: str) -> bool:
    if arg.startswith(("-", "$")) or "=" in arg or "://" in arg:
        return False
    return arg.endswith(SCRIPT_SUFFIXES) or arg.startswith("./")


def _kind(host: Path, rel: str) -> str | None:
    """ "dir", "file" or None (missing, a symlink, or something else)."""
    try:
        mode = (host / rel).lstat().st_mode
    except OSError:
        return None
    return "dir" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode) else None


def _top(rel: str) -> str | None:
    norm = posixpath.normpath(rel)
    if norm.startswith("..") or norm.startswith("/") or norm == ".":
        return None
    return norm.split("/", 1)[0]


def named_entries(
    host: Path, argv: Sequence[str], source_dir: str
) -> tuple[list[str], bool, list[str]]:
    """(entries to carry, runs ``python -m``, notes): what the command names in the project."""
    entries: list[str] = []
    notes: list[str] = []
    scripts: list[str] = []  # Node scripts the command runs (their requires travel too)
    module = False
    node = bool(argv) and posixpath.basename(argv[0]) in ("node", "npm", "npx")

    def add(rel: str) -> None:
        top = _top(rel)
        if top is None or top in entries:
            return
        if top in _NEVER:
            notes.append(f"{top} is never carried into the hardened image")
            return
        if not _plain_name(top):
            notes.append(f"{top!r} is not carried: a name with a comma, quote, `=` or space")
            return
        kind = _kind(host, top)
        if kind is None:
            notes.append(
                f"{top} (named by the command) is not a plain file or folder of the project"
            )
            return
        entries.append(top)

    for i, arg in enumerate(argv):
        after = argv[i - 1] if i else ""
        if arg == "-m" and i + 1 < len(argv):
            module = True
            pkg = argv[i + 1].split(".", 1)[0]
            if _kind(host, pkg) == "dir":
                add(pkg)
            elif _kind(host, pkg + ".py") == "file":
                add(pkg + ".py")
        elif after in _TAKES_CODE:
            continue  # a module name or inline code, not a path
        elif arg.startswith(source_dir.rstrip("/") + "/"):
            rel = arg[len(source_dir.rstrip("/")) + 1 :]
            add(rel)
            if arg.endswith(_NODE_SUFFIXES):
                scripts.append(posixpath.normpath(rel))
        elif _is_script(arg) and not arg.startswith("/"):
            add(arg)
            if arg.endswith(_NODE_SUFFIXES):
                node = True
                scripts.append(posixpath.normpath(arg))
        elif i and _is_relative_path(arg) and _top(arg) not in _NEVER:
            top = _top(arg)
            if top is not None and _kind(host, top) is not None:
                add(arg)  # an argument that names an entry of the project (`pytest tests/`)
    if node and entries:
        for script in scripts:
            if _top(script) in entries:
                _add_required(host, script, entries, notes)
        entries += [d for d in NODE_DEPS if d not in entries and _kind(host, d) is not None]
    return entries, module, notes


def _add_required(host: Path, script: str, entries: list[str], notes: list[str]) -> None:
    """The project files ``script`` loads by a relative path, added to ``entries`` as
    exact paths (a folder already carried covers its files)."""
    found = required_files(host, script)
    notes += found.notes
    for rel in found.files:
        top = _top(rel)
        if top is None or top in entries or rel in entries:
            continue
        if top in _NEVER:
            notes.append(f"{script} loads {rel}: {top} is never carried into the hardened image")
            continue
        if not _plain_name(rel):
            notes.append(f"{rel!r} is not carried: a name with a comma, quote, `=` or space")
            continue
        entries.append(rel)


_TAKES_CODE = frozenset({"-m", "-c", "-e", "--eval"})
# a name written into `--mount type=bind,source=...,target=...` (--code-mount) must not be
# able to add a field there
_UNPLAIN = re.compile(r"[,\"'=\s\\]")


def _plain_name(rel: str) -> bool:
    return not _UNPLAIN.search(rel)


def _is_relative_path(arg: str) -> bool:
    return not arg.startswith(("-", "$", "/")) and "=" not in arg and "://" not in arg


def rewrite_argv(
    argv: Sequence[str], source_dir: str, target: str, entries: Sequence[str] = ()
) -> tuple[list[str], list[str]]:
    """Relative paths into the carried code made absolute under ``target`` (scripts always);
    ``source_dir/...`` moved there."""
    out: list[str] = []
    changed: list[str] = []
    src = source_dir.rstrip("/") + "/"
    for i, arg in enumerate(argv):
        new = arg
        carried = i > 0 and _is_relative_path(arg) and _top(arg) in entries
        if i and argv[i - 1] in _TAKES_CODE:
            pass
        elif arg.startswith(src) and target != source_dir:
            new = target.rstrip("/") + "/" + arg[len(src) :]
        elif (_is_script(arg) and not arg.startswith("/")) or carried:
            new = posixpath.normpath(posixpath.join(target, arg))
        if new != arg:
            changed.append(f"{arg} -> {new}")
        out.append(new)
    return out, changed


def _argv(value: Any) -> list[str] | None:
    if isinstance(value, str):
        return shlex.split(value)
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    return None


def code_target(source_dir: str, opts: HardenOptions) -> str:
    if source_dir == "/" or workdir_relation(source_dir, opts.workdir) is not None:
        return CODE_DIR
    return source_dir


def attach_code(
    svc: ServiceSpec,
    *,
    host_dir: Path,
    source_dir: str,
    how: str,
    image_start: Start | None,
    opts: HardenOptions,
    dockerfile: tuple[str, int, int] | None = None,
    keep_in_image: bool = False,
    deps: DepsInstall | None = None,
) -> ServiceSpec:
    """The service with its code carried out of the project (or a note why it is not).

    ``keep_in_image``: the code stays where the image has it (the build needs the whole
    project); only the command and ``PYTHONPATH`` follow it out of the working directory.
    """
    entry = _argv(svc.entrypoint)
    cmd = _argv(svc.command)
    if entry is None and image_start is not None:
        entry = image_start.entrypoint
        if cmd is None:
            cmd = image_start.cmd
    full = [*(entry or []), *(cmd or [])]
    target = code_target(source_dir, opts)
    entries, module, notes = named_entries(host_dir, full, source_dir)
    if not entries:
        notes.append(
            f"the agent's code came from the project ({how}), but its start command "
            f"({' '.join(full) or 'unknown'}) names no file of it: nothing was carried, so the "
            "agent may not start; name the script or package in the command"
        )
        return dataclasses.replace(svc, notes=(*svc.notes, *notes))
    # rewritten as one command line (an argument's meaning depends on the one before it)
    rewritten, changes = rewrite_argv(full, source_dir, target, entries)
    split = len(entry or [])
    new_entry, new_cmd = rewritten[:split], rewritten[split:]
    ce = new_entry != list(entry or [])
    cc = new_cmd != list(cmd or [])
    env = [e for e in svc.env if e.name != "PYTHONPATH"]
    if module:
        env.insert(0, EnvVar("PYTHONPATH", target))
    if keep_in_image:
        notes.append(
            f"the agent's code came from the project ({how}), and the Dockerfile runs steps "
            "after that COPY that may need the whole project, so it was not narrowed: the "
            f"project stays in the image at {source_dir} (read-only, outside the working "
            f"directory {opts.workdir}); narrow the COPY to {', '.join(entries)} and what the "
            "install needs"
        )
        if deps is not None:
            notes += [n for n in deps.notes if n.startswith("not narrowed")]
            notes.append("no hardened Dockerfile is written: the dependencies are the original's")
    else:
        notes.append(
            f"the agent's code came from the project ({how}); only {', '.join(entries)} travel"
            f"{'s' if len(entries) == 1 else ''}, read-only at {target}, outside the working "
            f"directory {opts.workdir}"
        )
    if changes:
        notes.append("relative paths rewritten: " + "; ".join(changes))
    if module:
        notes.append(f"PYTHONPATH={target}: `python -m` imports the package from there")
    if deps is not None and not keep_in_image:
        notes += deps.notes
    if keep_in_image:
        if target != source_dir:
            notes.append(
                f"the code stays at {source_dir} in the image, which is the working directory "
                "here: pass another --workdir"
            )
            return dataclasses.replace(svc, notes=(*svc.notes, *notes))
        return dataclasses.replace(
            svc,
            entrypoint=new_entry if ce else svc.entrypoint,
            command=new_cmd if (cc or ce) and cmd is not None else svc.command,
            env=tuple(env),
            notes=(*svc.notes, *notes),
        )
    code = CodeSpec(
        host_dir=str(host_dir.resolve()),
        source_dir=source_dir,
        target=target,
        entries=tuple(entries),
        how=how,
        base_image=svc.image,
        dockerfile=dockerfile,
        deps=deps,
    )
    # a rewritten ENTRYPOINT is given with its CMD: docker resets CMD when ENTRYPOINT is set
    return dataclasses.replace(
        svc,
        entrypoint=new_entry if ce else svc.entrypoint,
        command=new_cmd if (cc or ce) and cmd is not None else svc.command,
        env=tuple(env),
        notes=(*svc.notes, *notes),
        code=code,
    )


_SAFE_TAG = re.compile(r"[^a-z0-9._-]+")


def hardened_tag(svc: ServiceSpec) -> str:
    """The tag the hardened image is built as: the original's with ``-hardened``."""
    if svc.image and "@" not in svc.image:
        repo, sep, tag = svc.image.rpartition(":")
        if sep and "/" not in tag:
            return f"{repo}:{tag}-hardened"
        return f"{svc.image}:hardened"
    name = _SAFE_TAG.sub("-", svc.name.lower()).strip("-.") or "agent"
    return f"{name}:hardened"
