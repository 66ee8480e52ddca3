"""Reading a hardened `docker-run.sh` back (also after a person edited it) into :class:`RunArgs`,
and its build line into :class:`BuildArgs`, so ``--verify`` runs what is written, not what
was meant (the script is written by :mod:`agentguard.harden.docker_run`). A flag the reader
does not know is an error, never skipped: an unread flag could be the one that undoes the
hardening. Nothing is expanded from this process's environment.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field


class RunParseError(ValueError):
    """The script is not a `docker run` line this reader can vouch for."""


@dataclass
class MountArg:
    type: str
    source: str | None
    target: str
    read_only: bool


@dataclass
class RunArgs:
    image: str = ""
    command: list[str] = field(default_factory=list)
    entrypoint: str | None = None
    user: str | None = None
    workdir: str | None = None
    read_only: bool = False
    tmpfs: dict[str, str] = field(default_factory=dict)
    cap_drop: list[str] = field(default_factory=list)
    cap_add: list[str] = field(default_factory=list)
    security_opt: list[str] = field(default_factory=list)
    network: str | None = None
    memory: str | None = None
    pids_limit: int | None = None
    env: list[str] = field(default_factory=list)
    env_files: list[str] = field(default_factory=list)
    mounts: list[MountArg] = field(default_factory=list)
    privileged: bool = False
    pid: str | None = None
    ipc: str | None = None


_SWITCHES = {"--rm", "--read-only", "--privileged", "-i", "-t", "-it", "--init", "-d"}
_VALUED = {
    "--user": "user",
    "-u": "user",
    "--workdir": "workdir",
    "-w": "workdir",
    "--network": "network",
    "--net": "network",
    "--memory": "memory",
    "-m": "memory",
    "--pids-limit": "pids_limit",
    "--entrypoint": "entrypoint",
    "--pid": "pid",
    "--ipc": "ipc",
    "--tmpfs": "tmpfs",
    "--cap-drop": "cap_drop",
    "--cap-add": "cap_add",
    "--security-opt": "security_opt",
    "--env": "env",
    "-e": "env",
    "--env-file": "env_files",
    "--mount": "mount",
    "--volume": "volume",
    "-v": "volume",
    "--name": "name",
}


def _open_quote(line: str, quote: str) -> str:
    """The quote still open at the end of ``line`` ("" none), starting inside ``quote``."""
    i = 0
    while i < len(line):
        c = line[i]
        if quote == "'":
            quote = "" if c == "'" else quote
        elif c == "\\":
            i += 1
        elif c == '"':
            quote = "" if quote == '"' else '"'
        elif c == "'" and not quote:
            quote = "'"
        i += 1
    return quote


def _logical_lines(text: str) -> list[str]:
    """The script's commands, one string each: a line ending in ``\\`` continues, and so
    does one that ends inside a quote (a newline inside quotes is part of the word)."""
    joined: list[str] = []
    buf = ""
    quote = ""
    for raw in text.splitlines():
        if quote:  # inside a quoted word: the newline and the line are the word's
            buf += "\n" + raw
            quote = _open_quote(raw, quote)
            if not quote and not buf.endswith("\\"):
                joined.append(buf)
                buf = ""
            elif not quote:
                buf = buf[:-1] + " "
            continue
        line = raw.rstrip()
        if not buf and (not line.strip() or line.lstrip().startswith("#")):
            continue
        quote = _open_quote(line, "")
        if quote:
            buf += line
            continue
        if line.endswith("\\"):
            buf += line[:-1] + " "
            continue
        joined.append(buf + line)
        buf = ""
    if buf:
        joined.append(buf)
    return joined


def _logical_command(text: str) -> str:
    joined = _logical_lines(text)
    runs = [j for j in joined if "docker" in j.split() and "run" in j.split()]
    if len(runs) != 1:
        raise RunParseError(f"expected one `docker run` command, found {len(runs)}")
    return runs[0]


_LITERAL_DOLLAR = "\x00"  # a `$` inside single quotes: the shell does not expand it
_LITERAL_TICK = "\x01"  # a backquote inside single quotes, likewise
# `${NAME:?message}`: the shell stops with the message when NAME is unset (what harden writes
# where the user must give a value); kept as written, never filled in from any environment
_PLACEHOLDER_USE = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*:\?[^}$`\\]*\}")


def _protect_single_quoted(line: str) -> str:
    """``line`` with each ``$`` and backquote inside single quotes (or escaped) replaced by
    a marker: the shell leaves those as written (``'echo $TASK'`` reaches the container
    as written); every other one is an expansion."""
    out: list[str] = []
    quote = ""
    i = 0
    marks = {"$": _LITERAL_DOLLAR, "`": _LITERAL_TICK}
    while i < len(line):
        c = line[i]
        if quote == "'":
            quote = "" if c == "'" else quote
            out.append(marks.get(c, c))
        elif c == "\\" and i + 1 < len(line):  # `\$` is a literal $ too
            nxt = line[i + 1]
            out.append(marks[nxt] if nxt in marks else line[i : i + 2])
            i += 1
        elif c in "'\"" and quote in ("", c):
            quote = c if quote == "" else ""
            out.append(c)
        else:
            out.append(c)
        i += 1
    return "".join(out)


def _shell_words(line: str) -> list[str]:
    """The words of one command line as the shell would pass them, without running the
    shell: quotes removed, single-quoted text literal. Nothing is expanded from any
    environment (``--verify`` must not run what its own environment says): a ``$NAME``,
    ``${NAME}``, ``$(...)`` or backquote outside single quotes is a :class:`RunParseError`;
    a ``${NAME:?message}`` placeholder stays as written."""
    try:
        words = shlex.split(_protect_single_quoted(line), comments=True)
    except ValueError as exc:  # an unclosed quote
        raise RunParseError(f"cannot split the command line: {exc}") from None
    out: list[str] = []
    for w in words:
        rest = _PLACEHOLDER_USE.sub("", w)
        if "$" in rest or "`" in rest:
            raise RunParseError(
                f"{w!r} is expanded by the shell ($VAR, $(...) or `...`): the verifier does not "
                "expand variables or run commands from its own environment; write the value"
            )
        out.append(w.replace(_LITERAL_DOLLAR, "$").replace(_LITERAL_TICK, "`"))
    return out


def parse_run_script(text: str) -> RunArgs:
    """The `docker run` command of a script, its words as the shell would pass them
    (:func:`_shell_words`: nothing expanded)."""
    words = _shell_words(_logical_command(text))
    while words and words[0] in ("exec", "command"):
        words.pop(0)
    if words[:2] != ["docker", "run"]:
        raise RunParseError("the command does not start with `docker run`")
    return parse_run_argv(words[2:])


_SINGLE = frozenset(
    {"user", "workdir", "network", "memory", "pids_limit", "entrypoint", "pid", "ipc"}
)


def parse_run_argv(words: Sequence[str]) -> RunArgs:
    args = RunArgs()
    seen: set[str] = set()
    i = 0
    while i < len(words):
        w = words[i]
        if not w.startswith("-"):
            args.image = w
            args.command = list(words[i + 1 :])
            return args
        name, eq, inline = w.partition("=")
        if w in _SWITCHES:
            args.read_only |= w == "--read-only"
            args.privileged |= w == "--privileged"
            i += 1
            continue
        if name not in _VALUED:
            raise RunParseError(f"unknown flag {w!r}: cannot verify what it does")
        if eq:
            value = inline
            i += 1
        else:
            if i + 1 >= len(words):
                raise RunParseError(f"{w} needs a value")
            value = words[i + 1]
            i += 2
        key = _VALUED[name]
        if key in _SINGLE and key in seen:
            # docker reads some of these as a list (--network), others last-wins: either
            # way not one value this reader can vouch for
            raise RunParseError(f"{name} is given twice: cannot verify which one holds")
        seen.add(key)
        _apply(args, key, value)
    raise RunParseError("no image named after the flags")


def _apply(args: RunArgs, key: str, value: str) -> None:
    if key == "tmpfs":
        path, _, opts = value.partition(":")
        args.tmpfs[path] = opts
    elif key in ("cap_drop", "cap_add", "security_opt", "env", "env_files"):
        getattr(args, key).append(value)
    elif key == "mount":
        args.mounts.append(_mount(value))
    elif key == "volume":
        args.mounts.append(_volume(value))
    elif key == "pids_limit":
        try:
            args.pids_limit = int(value)
        except ValueError:
            raise RunParseError(f"--pids-limit {value!r} is not a number") from None
    elif key != "name":
        setattr(args, key, value)


_MOUNT_ALIASES = {
    "source": {"src"},
    "src": {"source"},
    "target": {"destination", "dst"},
    "destination": {"target", "dst"},
    "dst": {"target", "destination"},
    "readonly": {"ro"},
    "ro": {"readonly"},
}


def _mount(spec: str) -> MountArg:
    fields: dict[str, str] = {}
    flags: set[str] = set()
    if any(c in spec for c in "\"'\n"):
        raise RunParseError(f"--mount {spec!r}: a quoted field cannot be verified")
    for part in spec.split(","):
        k, eq, v = part.partition("=")
        key = k.strip()
        # a key twice (`source=evil,type=bind,source=/`): docker's last one wins, so a value
        # that smuggled a comma in would choose the mount
        if eq and (key in fields or (key in _MOUNT_ALIASES and _MOUNT_ALIASES[key] & set(fields))):
            raise RunParseError(f"--mount {spec!r}: {key} is given twice")
        if eq:
            fields[key] = v
        else:
            flags.add(k.strip())
    target = fields.get("target") or fields.get("destination") or fields.get("dst")
    if not target:
        raise RunParseError(f"--mount {spec!r} has no target")
    ro = "readonly" in flags or "ro" in flags or fields.get("readonly") in ("true", "1")
    return MountArg(
        fields.get("type", "volume"),
        fields.get("source") or fields.get("src"),
        target,
        ro or fields.get("ro") in ("true", "1"),
    )


def _volume(spec: str) -> MountArg:
    parts = spec.split(":")
    if len(parts) == 1:
        return MountArg("volume", None, parts[0], False)
    source, target = parts[0], parts[1]
    modes = set(parts[2].split(",")) if len(parts) > 2 else set()
    kind = "bind" if source.startswith(("/", ".", "~")) else "volume"
    return MountArg(kind, source, target, bool(modes & {"ro", "readonly"}))


@dataclass
class BuildArgs:
    """The script's ``docker build`` of the hardened image (paths as written)."""

    tag: str
    dockerfile: str
    context: str
    build_args: dict[str, str] = field(default_factory=dict)


def parse_build_line(text: str) -> BuildArgs | None:
    """The script's ``docker build`` line, or None when it has none (nothing expanded)."""
    builds = [j for j in _logical_lines(text) if j.split()[:2] == ["docker", "build"]]
    if not builds:
        return None
    if len(builds) > 1:
        raise RunParseError(f"expected at most one `docker build` command, found {len(builds)}")
    words = [w for w in _shell_words(builds[0])[2:] if not w.startswith(">")]
    return parse_build_argv(words)


def parse_build_argv(words: Sequence[str]) -> BuildArgs:
    """``docker build`` arguments (after ``docker build``) as :class:`BuildArgs`."""
    tag = dockerfile = None
    positional: list[str] = []
    extra: dict[str, str] = {}
    i = 0
    while i < len(words):
        w = words[i]
        if w in ("--quiet", "-q", "--pull=false"):
            i += 1
        elif w in ("--tag", "-t", "--file", "-f", "--build-arg") and i + 1 < len(words):
            value = words[i + 1]
            if w in ("--tag", "-t"):
                tag = value
            elif w in ("--file", "-f"):
                dockerfile = value
            else:
                k, _, v = value.partition("=")
                extra[k] = v
            i += 2
        elif w.startswith("-"):
            raise RunParseError(f"unknown build flag {w!r}: cannot verify what it does")
        else:
            positional.append(w)
            i += 1
    if tag is None or len(positional) != 1:
        raise RunParseError("the `docker build` line needs --tag and one context folder")
    return BuildArgs(tag, dockerfile or "Dockerfile", positional[0], extra)
