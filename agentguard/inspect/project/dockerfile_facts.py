"""Dockerfile facts: stages, users, working directories, ENV/ARG, COPY/ADD and RUN lines.

Parsing uses the ``dockerfile`` package, which wraps BuildKit's own parser (heredocs,
flags, the escape directive). That package ships binary wheels for x86_64 (Linux, macOS,
Windows) and macOS arm64 only; where it is not installed (Linux aarch64, for one) the
small parser in :mod:`agentguard.inspect.project.dockerfile_fallback` takes over and the
source says so. Both produce the same :class:`Instruction` records.
"""

from __future__ import annotations

import importlib
import posixpath
import re
from typing import Any

from agentguard.facts.dockerfile import CopyStep as CopyStep
from agentguard.facts.dockerfile import DockerfileFacts as DockerfileFacts
from agentguard.facts.dockerfile import EnvSetting as EnvSetting
from agentguard.facts.dockerfile import RunStep as RunStep
from agentguard.facts.dockerfile import Stage as Stage
from agentguard.facts.dockerfile import StartStep
from agentguard.inspect.project.dockerfile_fallback import Instruction, parse_fallback

_buildkit: Any
try:  # pragma: no cover - which branch runs depends on the platform's wheels
    _buildkit = importlib.import_module("dockerfile")
    HAVE_BUILDKIT_PARSER = True
except ImportError:  # pragma: no cover
    _buildkit = None
    HAVE_BUILDKIT_PARSER = False


class DockerfileError(ValueError):
    """The file is not a Dockerfile the parser accepts."""


def parse_instructions(text: str) -> tuple[list[Instruction], str]:
    """Instructions of ``text`` and the parser used. Raises :class:`DockerfileError`."""
    if "\x00" in text:
        raise DockerfileError("file contains NUL bytes")
    if HAVE_BUILDKIT_PARSER and _buildkit is not None:
        try:
            cmds = _buildkit.parse_string(text)
        except _buildkit.GoParseError as exc:
            raise DockerfileError(str(exc)) from None
        for c in cmds:
            if not isinstance(c.cmd, str) or not isinstance(c.original, str):
                # e.g. a file holding only a line continuation: the parser returns a
                # command without a name. Not a Dockerfile we can read: a failed source.
                raise DockerfileError(f"line {c.start_line}: not an instruction")
        return [
            Instruction(
                cmd=c.cmd.upper(),
                flags=tuple(c.flags),
                args=tuple(c.value),
                original=c.original,
                start_line=c.start_line,
                end_line=c.end_line,
                heredocs=tuple(h.content for h in c.heredocs),
                json=c.json,
            )
            for c in cmds
        ], "buildkit"
    try:
        return parse_fallback(text), "fallback"
    except ValueError as exc:
        raise DockerfileError(str(exc)) from None


_KNOWN = {
    "FROM", "RUN", "CMD", "LABEL", "MAINTAINER", "EXPOSE", "ENV", "ADD", "COPY",
    "ENTRYPOINT", "VOLUME", "USER", "WORKDIR", "ARG", "ONBUILD", "STOPSIGNAL",
    "HEALTHCHECK", "SHELL",
}  # fmt: skip


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        inner = value[1:-1]
        return re.sub(r"\\(.)", r"\1", inner) if value[0] == '"' else inner
    return re.sub(r"\\(.)", r"\1", value)


def _env_pairs(ins: Instruction) -> list[EnvSetting]:
    args = list(ins.args)
    out: list[EnvSetting] = []
    if ins.cmd == "ENV":
        for i in range(0, len(args) - 1, 2):
            out.append(EnvSetting(args[i], _unquote(args[i + 1]), ins.start_line, "ENV"))
    else:  # ARG
        for a in args:
            name, eq, value = a.partition("=")
            out.append(EnvSetting(name, _unquote(value) if eq else None, ins.start_line, "ARG"))
    return out


_VAR = re.compile(
    r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?::?([-+])([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))"
)


def _expand(text: str, env: tuple[EnvSetting, ...]) -> str:
    """``$VAR``/``${VAR}``/``${VAR:-default}``/``${VAR:+alt}`` replaced as the builder
    does for WORKDIR, COPY and ADD, from the stage's ENV and ARG values so far (the last
    one wins); a variable with no known value is left as written."""
    known: dict[str, str] = {}
    for setting in env:
        if setting.value is not None:
            known[setting.name] = _VAR.sub(lambda m: _one(m, known), setting.value)
        else:
            known.pop(setting.name, None)
    return _VAR.sub(lambda m: _one(m, known), text)


def _one(m: re.Match[str], known: dict[str, str]) -> str:
    name = m.group(1) or m.group(4)
    value = known.get(name)
    op, word = m.group(2), m.group(3) or ""
    if op == "-":
        return value if value else word
    if op == "+":
        return word if value else ""
    return value if value is not None else m.group(0)


def _resolve(path: str, workdir: str | None, env: tuple[EnvSetting, ...] = ()) -> str:
    """The absolute path ``path`` names at this point of the stage. A path that still starts
    with an unknown variable is kept as written: joining it to the working directory would
    invent a folder (``/code/$HOME/app``)."""
    expanded = _expand(_unquote(path), env)
    if expanded.startswith("$"):
        return expanded
    base = workdir or "/"
    return posixpath.normpath(posixpath.join(base, expanded))


def _flag(flags: tuple[str, ...], name: str) -> str | None:
    for f in flags:
        if f.startswith(f"--{name}="):
            return f.split("=", 1)[1]
    return None


def build_facts(path: str, text: str) -> DockerfileFacts:
    """Parse ``text`` into stages. Raises :class:`DockerfileError` for a non-Dockerfile."""
    instructions, parser = parse_instructions(text)
    unknown = [i for i in instructions if i.cmd not in _KNOWN]
    if unknown:
        first = unknown[0]
        raise DockerfileError(f"line {first.start_line}: unknown instruction {first.cmd!r}")
    global_args: list[EnvSetting] = []
    stages: list[Stage] = []
    cur: dict[str, object] | None = None

    def close() -> None:
        if cur is not None:
            stages.append(Stage(**cur))  # type: ignore[arg-type]

    for ins in instructions:
        if ins.cmd == "FROM":
            close()
            args = [a for a in ins.args]
            if not args:
                raise DockerfileError(f"line {ins.start_line}: FROM without an image")
            name = args[2] if len(args) >= 3 and args[1].lower() == "as" else None
            cur = {
                "index": len(stages),
                "base": args[0],
                "name": name,
                "line": ins.start_line,
                "user": None,
                "user_line": None,
                "workdir": None,
                "workdir_line": None,
                "env": (),
                "copies": (),
                "runs": (),
                "cmd": None,
                "entrypoint": None,
            }
            continue
        if cur is None:
            if ins.cmd == "ARG":
                global_args.extend(_env_pairs(ins))
                continue
            raise DockerfileError(f"line {ins.start_line}: {ins.cmd} before the first FROM")
        _apply(cur, ins)
    close()
    if not stages:
        raise DockerfileError("no FROM instruction")
    return DockerfileFacts(path, parser, tuple(stages), tuple(global_args))


def _apply(cur: dict[str, object], ins: Instruction) -> None:
    env: tuple[EnvSetting, ...] = cur["env"]  # type: ignore[assignment]
    workdir = cur["workdir"] if isinstance(cur["workdir"], str) else None
    if ins.cmd in ("ENV", "ARG"):
        cur["env"] = (*env, *_env_pairs(ins))
    elif ins.cmd == "USER" and ins.args:
        cur["user"] = _unquote(ins.args[0])
        cur["user_line"] = ins.start_line
    elif ins.cmd == "WORKDIR" and ins.args:
        cur["workdir"] = _resolve(ins.args[0], workdir, env)
        cur["workdir_line"] = ins.start_line
    elif ins.cmd in ("COPY", "ADD") and len(ins.args) >= 2:
        step = CopyStep(
            instruction=ins.cmd,
            sources=tuple(_unquote(a) for a in ins.args[:-1]),
            destination=ins.args[-1],
            destination_abs=_resolve(ins.args[-1], workdir, env),
            from_stage=_flag(ins.flags, "from"),
            line=ins.start_line,
            checksum=_flag(ins.flags, "checksum"),
        )
        cur["copies"] = (*cur["copies"], step)  # type: ignore[misc]
    elif ins.cmd in ("CMD", "ENTRYPOINT") and ins.args:
        start = StartStep(ins.cmd, tuple(ins.args), not ins.json, ins.start_line)
        cur["cmd" if ins.cmd == "CMD" else "entrypoint"] = start
    elif ins.cmd == "RUN":
        joined = " ".join(ins.args)
        script = joined if ins.json else "\n".join([joined, *ins.heredocs])
        cur["runs"] = (*cur["runs"], RunStep(script, ins.start_line, env))  # type: ignore[misc]
