"""The agent's dependencies in the hardened image come from the project's lock.

The lock is the project's ``requirements.lock`` (hash-pinned, ``agentguard lock`` writes
it), ``uv.lock`` or ``poetry.lock`` (each with its ``pyproject.toml``), found at the top of
the project folder (regular files only, never through a link). Two locks and no
Dockerfile line that names one: neither is picked. No lock: the dependencies are what the
original image installs, and the notes say so.

How they are installed:

- the original Dockerfile already installs from that lock (``pip install --require-hashes
  -r requirements.lock``, ``uv sync --locked``, ``poetry install``): its line is kept;
- it resolves instead (``pip install httpx``, ``-r requirements.txt``): that line is
  replaced by the lock's install line, keeping where packages come from (``--index-url``,
  ``--find-links``, ``--no-index``) and how the installer runs (``python3 -m pip``,
  ``--user``, ``--target``);
- there is no Dockerfile (the hardened image is ``FROM`` the original): the lock's install
  line goes after ``FROM``.

Only the lock file(s) are copied for it (to ``/tmp/agentguard`` for ``requirements.lock``,
beside the code for ``uv``/``poetry``, which make their environment there).

The same pass decides whether ``COPY . DIR`` can be narrowed when ``RUN`` steps follow it:
only when each of them provably reads named files (see
:mod:`agentguard.harden.install_steps`), which are then copied, and nothing else.
"""

from __future__ import annotations

import json
import posixpath
import shlex
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from agentguard.harden.install_steps import Step, read_step
from agentguard.harden.model import DepsInstall

STAGING = "/tmp/agentguard"
LOCKS = (
    ("requirements.lock", ("requirements.lock",)),
    ("uv.lock", ("pyproject.toml", "uv.lock")),
    ("poetry.lock", ("pyproject.toml", "poetry.lock")),
)
_TOOL_LOCK = {"uv-sync": "uv.lock", "poetry": "poetry.lock"}


@dataclass(frozen=True)
class Instruction:
    first: int
    last: int
    word: str
    rest: str
    workdir: str | None  # the WORKDIR in effect


def instructions(text: str) -> Iterator[tuple[int, int, str, str]]:
    """Each Dockerfile instruction: its first and last line (1-based), word and rest."""
    buf, first = "", 0
    for no, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        if not buf and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if not buf:
            first = no
        if line.endswith("\\"):
            buf += line[:-1] + " "
            continue
        logical, buf = (buf + line).strip(), ""
        word, _, rest = logical.partition(" ")
        yield first, no, word.upper(), rest.strip()


def last_stage(text: str) -> list[Instruction]:
    """The instructions of the Dockerfile's last stage, with their 1-based line ranges."""
    out: list[Instruction] = []
    workdir: str | None = None
    for first, no, word, rest in instructions(text):
        if word == "FROM":
            out, workdir = [], None
        elif word == "WORKDIR" and rest:
            workdir = posixpath.normpath(posixpath.join(workdir or "/", rest))
        out.append(Instruction(first, no, word, rest, workdir))
    return out


def _regular(host: Path, rel: str) -> bool:
    try:
        return stat.S_ISREG((host / rel).lstat().st_mode)
    except OSError:
        return False


def project_locks(host: Path) -> list[tuple[str, tuple[str, ...]]]:
    """(lock, the files its install reads) for each lock at the top of the project."""
    return [(name, files) for name, files in LOCKS if all(_regular(host, f) for f in files)]


def _lock_of(step: Step) -> str | None:
    for cmd in step.commands:
        if cmd.tool in _TOOL_LOCK:
            return _TOOL_LOCK[cmd.tool]
        for r in cmd.requirements:
            if posixpath.basename(r) == "requirements.lock":
                return "requirements.lock"
    return None


def _copy(files: tuple[str, ...], dest: str) -> str:
    return "COPY " + json.dumps([*files, dest.rstrip("/") + "/"], ensure_ascii=False)


def install_lines(lock: str, files: tuple[str, ...], like: Step | None, target: str) -> list[str]:
    """The lines that install ``lock``; ``like``: the resolving step they replace (its
    launcher, package sources and install options are kept)."""
    if lock == "requirements.lock":
        cmd = next((c for c in (like.commands if like else ()) if c.tool == "pip"), None)
        launcher = list(cmd.launcher) if cmd is not None else ["python", "-m", "pip"]
        options = list(cmd.options) if cmd is not None else ["--no-cache-dir"]
        words = [*launcher, "install", *options, "--no-deps", "--require-hashes"]
        return [
            _copy(files, STAGING),
            "RUN " + shlex.join([*words, "-r", f"{STAGING}/requirements.lock"]),
        ]
    if lock == "uv.lock":
        return [
            _copy(files, target),
            f"RUN uv sync --locked --no-install-project --no-dev --project {shlex.quote(target)}",
            f"ENV VIRTUAL_ENV={target}/.venv PATH={target}/.venv/bin:$PATH",
        ]
    return [
        _copy(files, target),
        "RUN POETRY_VIRTUALENVS_CREATE=false poetry install --no-root --only main "
        f"--no-interaction --directory {shlex.quote(target)}",
    ]


def _line(ins: Instruction) -> str:
    return f"line {ins.first} (`RUN {ins.rest[:80]}`)"


def plan_install(
    host: Path,
    text: str | None,
    copy_lines: tuple[int, int] | None,
    source_dir: str,
    target: str,
) -> DepsInstall:
    """How the hardened image gets the agent's dependencies.

    ``text``: the original Dockerfile; with ``copy_lines`` (its ``COPY . source_dir``) the
    hardened Dockerfile is that file narrowed, without them the file builds the image the
    hardened one is ``FROM``. ``target``: where the code goes.
    """
    found = project_locks(host)
    stage = last_stage(text) if text else []
    steps = [(ins, read_step(ins.rest)) for ins in stage if ins.word == "RUN"]
    after = [(i, s) for i, s in steps if copy_lines is not None and i.first > copy_lines[1]]
    onbuild = [i for i in stage if i.word == "ONBUILD" and copy_lines and i.first > copy_lines[1]]
    notes: list[str] = []
    chosen, own = _choose(found, steps, notes)
    lines: list[str] = []
    replaces: list[tuple[int, int]] = []
    command = ""
    staged = next((i for i in stage if i.word == "COPY" and "--from" in i.rest), None)
    if chosen is not None and own is not None:
        notes.append(f"the dependencies are installed from {chosen[0]} by your {_line(own)}: kept")
    elif chosen is not None and staged is not None and not _installing(steps):
        # a builder stage made the environment; the final image may have no installer
        notes.append(
            f"the dependencies come from another build stage (line {staged.first}, `COPY "
            f"{staged.rest[:60]}`): kept; install them from {chosen[0]} in that stage"
        )
        chosen = None
    elif chosen is not None:
        lines, replaces, command = _replace(chosen, steps, copy_lines is not None, target, notes)
    replaced = {first for first, _last in replaces}
    narrowable, inputs = False, list[str]()
    if onbuild:
        notes.append(
            f"not narrowed: your line {onbuild[0].first} (`ONBUILD ...`) runs in images built "
            "from this one, on whatever they copy"
        )
    else:
        narrowable, inputs = _narrowable(host, after, replaced, source_dir, notes)
    return DepsInstall(
        lock=chosen[0] if chosen is not None else None,
        lines=tuple(lines),
        command=command,
        replaces=tuple(replaces),
        build_inputs=tuple(inputs),
        narrowable=narrowable,
        notes=tuple(notes),
    )


def _installing(steps: list[tuple[Instruction, Step]]) -> bool:
    return any(s.installs in ("resolve", "lock") for _i, s in steps)


def _choose(
    found: list[tuple[str, tuple[str, ...]]],
    steps: list[tuple[Instruction, Step]],
    notes: list[str],
) -> tuple[tuple[str, tuple[str, ...]] | None, Instruction | None]:
    """(the lock to install from, the Dockerfile's own line that installs it already)."""
    names = [name for name, _f in found]
    for ins, step in steps:
        lock = _lock_of(step)
        if step.installs == "lock" and lock in names:
            return next(f for f in found if f[0] == lock), ins
    if len(found) == 1:
        return found[0], None
    if found:
        notes.append(
            f"the project has {len(found)} locks ({', '.join(names)}) and the Dockerfile installs "
            "from none of them: which one the agent runs with is not guessed, so the "
            "dependencies are the original image's; install from one in your Dockerfile"
        )
        return None, None
    resolving = [_line(i) for i, s in steps if s.installs == "resolve"]
    notes.append(
        "the project has no lock (requirements.lock, uv.lock or poetry.lock): the "
        "dependencies are the original image's"
        + (f", resolved at build time by {'; '.join(resolving)}" if resolving else "")
        + "; run `agentguard lock` and harden again to install them from the lock"
    )
    return None, None


def _replace(
    chosen: tuple[str, tuple[str, ...]],
    steps: list[tuple[Instruction, Step]],
    narrowed: bool,
    target: str,
    notes: list[str],
) -> tuple[list[str], list[tuple[int, int]], str]:
    """The lock's install lines and the resolving lines of the original they replace
    (only in a narrowed copy of it: ``narrowed``)."""
    lock, files = chosen
    resolving = [(i, s) for i, s in steps if s.installs == "resolve"]
    fixed = [(i, s) for i, s in resolving if s.replaceable] if narrowed else []
    like = next((s for _i, s in (fixed or resolving)), None)
    lines = install_lines(lock, files, like, target)
    command = lines[1].removeprefix("RUN ")
    kept = [shlex.join(c.argv) for _i, s in fixed for c in s.tool_commands]
    if kept:  # `pip install --upgrade pip` of a replaced step stays, before the lock install
        lines = ["RUN " + " && ".join(kept), *lines]
    for ins, step in resolving:
        if not (narrowed and step.replaceable):
            notes.append(
                f"your {_line(ins)} resolves packages at build time"
                + (" and does more than install: kept; " if narrowed else "; ")
                + f"the {lock} install "
                + ("follows it" if narrowed else "runs on top of the image it builds")
            )
    if fixed:
        where = "in place of " + "; ".join(_line(i) for i, _s in fixed)
    else:
        where = "before the code is copied" if narrowed else "on top of the original image"
    notes.append(
        f"the dependencies are installed from {lock} (copied in: {', '.join(files)}; nothing "
        f"else of the project), {where}: `{command}`"
    )
    return lines, [(i.first, i.last) for i, _s in fixed], command


def _narrowable(
    host: Path,
    after: list[tuple[Instruction, Step]],
    replaced: set[int],
    source_dir: str,
    notes: list[str],
) -> tuple[bool, list[str]]:
    """Whether every RUN after ``COPY .`` reads only named project files (and which)."""
    inputs: list[str] = []
    for ins, step in after:
        if ins.first in replaced:
            continue
        if step.reads is None:
            notes.append(
                f"not narrowed: your {_line(ins)} may read any file of the project: {step.why}"
            )
            return False, []
        for rel in step.reads:
            full = posixpath.normpath(posixpath.join(ins.workdir or "/", rel))
            inside = posixpath.relpath(full, source_dir) if full.startswith(source_dir) else None
            if inside is None or inside.startswith("..") or not _regular(host, inside):
                notes.append(
                    f"not narrowed: your {_line(ins)} reads {rel}, which is not a file the COPY "
                    "brings from the project"
                )
                return False, []
            if inside not in inputs:
                inputs.append(inside)
    if inputs:
        notes.append(
            "the RUN steps after the COPY read only " + ", ".join(inputs) + ": copied with the code"
        )
    return True, inputs
