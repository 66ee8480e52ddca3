"""The scratch environment: the project's lock installed as a deployment would install it.

``uv venv`` with the interpreter the project targets (the lowest Python on this machine that
its ``requires-python`` admits, the floor itself when present), then ``uv pip sync
--require-hashes`` of the lock: agentguard's ``requirements.lock``, or the project's own
``uv.lock`` written out by ``uv export --frozen --no-dev`` (what ``uv sync --frozen
--no-dev`` installs), a ``poetry.lock`` or another tool's ``pylock.toml`` by agentguard's own
export (the same pins and hashes; Poetry is not needed). uv's cache is a fresh folder inside the run's
temporary folder: a cold install, as on a deployment host, and nothing kept that a later
run could trust.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from agentguard.facts.smoke import Install
from agentguard.findings import Source
from agentguard.smoke.clock import Clock, cut_short
from agentguard.smoke.proc import child_env, run, tail

# uv's words for "this could not be tried here", not "the lock does not install"
_UNREACHABLE = re.compile(
    r"(failed to fetch|error sending request|dns error|connection refused|timed out|"
    r"network is unreachable|could not connect|tcp connect error)",
    re.I,
)
_PLATFORM = re.compile(
    r"(no wheels with a matching platform|not compatible with the current platform|"
    r"only has wheels for|requires-python|no matching distribution)",
    re.I,
)


@dataclass(frozen=True)
class Options:
    index_url: str | None = None
    find_links: tuple[str, ...] = ()
    no_index: bool = False


@dataclass(frozen=True)
class Interpreter:
    path: str
    version: str  # "3.11.7"
    note: str | None  # why not the project's floor, when it is not


def _version_of(path: str, timeout: float = 20.0) -> str | None:
    try:
        done = subprocess.run(
            [path, "-I", "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"],
            capture_output=True,
            timeout=max(0.001, timeout),
            check=False,
            env={"PATH": os.environ.get("PATH", os.defpath)},
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    out = done.stdout.decode("ascii", "replace").strip()
    return out if done.returncode == 0 and re.fullmatch(r"\d+\.\d+\.\d+", out) else None


def pick_interpreter(requires_python: str | None, clock: Clock | None = None) -> Interpreter | str:
    """The lowest Python here that ``requires_python`` admits; a reason when none does
    (each interpreter asked for its version within 20 s, or what is left of ``clock``)."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        spec = SpecifierSet(requires_python or "")
    except InvalidSpecifier:
        spec = SpecifierSet()
        requires_python = None
    running = ".".join(str(n) for n in sys.version_info[:3])
    found: dict[str, str] = {}
    fits: list[str] = []
    for minor in range(8, 20):  # the lowest admitted minor first; stop at the first that runs
        if not (spec.contains(f"3.{minor}.0") or spec.contains(f"3.{minor}.99")):
            continue
        if running.startswith(f"3.{minor}.") and spec.contains(running):
            found[running] = sys.executable
        else:
            path = shutil.which(f"python3.{minor}")
            limit = clock.budget(20.0).seconds if clock is not None else 20.0
            version = _version_of(path, limit) if path else None
            if version is None:
                continue
            found[version] = path or ""
        fits = [v for v in found if spec.contains(v)]
        if fits:
            break
    if not fits:
        return (
            f"no Python on this machine satisfies requires-python {requires_python!r} "
            f"(found {', '.join(sorted(found)) or 'none of python3.8 to python3.19 on PATH'})"
        )
    best = fits[0]
    floor = _floor(requires_python)
    note = None
    if requires_python is None:
        note = f"the project declares no requires-python: its lowest Python here ({best}) is used"
    elif floor and not best.startswith(floor + ".") and best != floor:
        note = f"requires-python {requires_python}: its floor {floor} is not on this machine; {best} is used"
    return Interpreter(found[best], best, note)


def _gist(lines: tuple[str, ...]) -> str:
    """uv's error, from its first line that says so (its last lines are often detail)."""
    first = next(
        (i for i, line in enumerate(lines) if "error" in line.lower()), max(0, len(lines) - 3)
    )
    return " ".join(" ".join(line.split()) for line in lines[first : first + 4])


def _floor(requires_python: str | None) -> str | None:
    m = re.search(r"(?:>=|~=|==)\s*(\d+\.\d+)", requires_python or "")
    return m.group(1) if m else None


def _uv_export(root: Path, scratch: str, clock: Clock) -> tuple[str, str] | Source:
    """The project's uv.lock as `uv sync --frozen --no-dev` installs it, written out by uv
    itself (no workspace member: those are the project's own code)."""
    from agentguard import safeio
    from agentguard.lock.backend import uv_binary

    out = os.path.join(scratch, "uv-export.txt")
    argv = [uv_binary(), "export", "--frozen", "--format", "requirements-txt", "--no-dev"]
    argv += ["--no-emit-workspace", "--no-header", "--project", str(root.resolve()), "-o", out]
    env = child_env(
        scratch, {"UV_CACHE_DIR": os.path.join(scratch, "uv-cache"), "UV_NO_CONFIG": "1"}
    )
    left = clock.budget(120.0)
    done = run(argv, cwd=scratch, env=env, timeout=max(0.001, left.seconds))
    if done.timed_out and left.cut:
        return cut_short(
            "smoke", "install", "`uv export --frozen` of uv.lock was stopped", left.cut
        )
    if done.code != 0:
        return Source.skipped(
            "smoke",
            "install",
            f"`uv export --frozen` of uv.lock failed: {' '.join(tail(done.output, 3))}",
        )
    return "uv.lock", safeio.read_text(out, root=scratch, cap=64 * 1024 * 1024)


def lock_text(root: Path, scratch: str, clock: Clock) -> tuple[str, str] | Source:
    """(lock name, requirements text with hashes) of the lock the project deploys from."""
    from agentguard import safeio
    from agentguard.errors import UsageError
    from agentguard.lock.mutex import REQUIREMENTS_LOCK
    from agentguard.lock.which_lock import existing_reader

    try:
        reader = existing_reader(root)
    except UsageError as exc:  # two foreign locks: agentguard does not pick one
        return Source.skipped("smoke", "install", str(exc))
    try:
        if reader is None:
            path = root / REQUIREMENTS_LOCK
            if not path.is_file():
                return Source.skipped(
                    "smoke",
                    "install",
                    f"no lock to install: {REQUIREMENTS_LOCK} is absent (run `agentguard lock`)",
                )
            return REQUIREMENTS_LOCK, safeio.read_text(path, root=root)
        if reader.format == "uv.lock":
            return _uv_export(root, scratch, clock)
        from agentguard.lock.export import render_export

        text = safeio.read_text(root / reader.filename, root=root)
        lock = reader.read(text, reader.filename)
        _, exported = render_export(lock, "requirements")
        return reader.filename, exported
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return Source.skipped(
            "smoke", "install", f"the lock could not be read for the smoke run: {exc}"
        )


def install(
    root: Path, scratch: str, requires_python: str | None, opts: Options, clock: Clock
) -> tuple[Install | None, str | None, Source]:
    """(what the install did, the scratch interpreter when it worked, its source), within
    ``clock`` (the install's share of the smoke run, capped by the run's deadline)."""
    from agentguard.lock.backend import uv_binary

    timeout = clock.budget()
    if timeout.spent:
        return None, None, _out_of_time(timeout.cut, "not started")
    got = lock_text(root, scratch, clock)
    if isinstance(got, Source):
        return None, None, got
    lock_name, text = got
    interp = pick_interpreter(requires_python, clock)
    if isinstance(interp, str):
        left = clock.budget()
        if left.spent and left.cut:  # (an interpreter that did not answer in the time left)
            return None, None, cut_short("smoke", "install", "no interpreter picked", left.cut)
        return None, None, Source.skipped("smoke", "install", interp)
    from agentguard import safeio

    req = str(safeio.write_in(scratch, "requirements.txt", text))
    venv = os.path.join(scratch, "venv")
    env = child_env(
        scratch, {"UV_CACHE_DIR": os.path.join(scratch, "uv-cache"), "UV_NO_CONFIG": "1"}
    )
    uv = uv_binary()
    left = clock.budget(60.0)
    made = run(
        [uv, "venv", "-q", "--python", interp.path, venv],
        cwd=scratch,
        env=env,
        timeout=max(0.001, left.seconds),
    )
    python = os.path.join(venv, "bin", "python")
    if made.timed_out and left.cut:
        return None, None, cut_short("smoke", "install", "uv venv was stopped", left.cut)
    if made.code != 0:
        return (
            None,
            None,
            Source.skipped("smoke", "install", f"uv venv failed: {' '.join(tail(made.output, 2))}"),
        )
    # uv.lock: as `uv sync --frozen` installs it (the hashes it records are checked, a pin
    # without one is not refused); every other lock: each pin must carry its hash
    hashes = [] if lock_name == "uv.lock" else ["--require-hashes"]
    argv = [uv, "pip", "sync", *hashes, "--python", python, req]
    how = " ".join(["uv pip sync", *hashes])
    if opts.index_url:
        argv += ["--index-url", opts.index_url]
    for link in opts.find_links:
        argv += ["--find-links", link]
    if opts.no_index:
        argv.append("--no-index")
    left = clock.budget()
    done = run(argv, cwd=scratch, env=env, timeout=max(0.001, left.seconds))
    lines = tail(done.output)
    base = Install(
        lock_name,
        interp.version,
        "ok",
        made.seconds + done.seconds,
        interpreter_note=interp.note,
        output=lines,
    )
    if done.timed_out and left.cut:
        what = f"uv pip sync of {lock_name} was stopped after {done.seconds:.1f} s"
        return None, None, cut_short("smoke", "install", what, left.cut)
    if done.timed_out:
        reason = f"uv pip sync of {lock_name} did not finish within {timeout.seconds:.0f} s"
        return None, None, Source.skipped("smoke", "install", reason)
    if done.code != 0:
        last = _gist(lines)
        if _UNREACHABLE.search(done.output):
            return (
                None,
                None,
                Source.skipped("smoke", "install", f"the index could not be reached: {last}"),
            )
        if _PLATFORM.search(done.output):
            return (
                None,
                None,
                Source.skipped(
                    "smoke",
                    "install",
                    f"the lock cannot be installed on this platform/Python {interp.version}: {last}",
                ),
            )
        failed = Install(
            lock_name, interp.version, "failed", base.seconds, last, interp.note, lines
        )
        return failed, None, Source.ok("smoke", "install", f"{lock_name} does not install: {last}")
    note = f" ({interp.note})" if interp.note else ""
    reason = f"{lock_name} installed with `{how}` into Python {interp.version}{note} in {base.seconds:.1f} s"
    return base, python, Source.ok("smoke", "install", reason)


def _out_of_time(cut: str | None, what: str) -> Source:
    """The install's time was gone before it began: the run's deadline (a failed source),
    or the smoke run's own budget (skipped, as what it did not get to always was)."""
    if cut:
        return cut_short("smoke", "install", what, cut)
    return Source.skipped("smoke", "install", f"{what}: the smoke run's deadline passed")
