"""The value of a text that names variables (``$VAR``, ``${VAR:-default}``), as far as the
file itself says it: a Dockerfile's ENV/ARG in force, a compose default. Pure; ``None``
means unknown (a variable whose value the file does not give), never "empty".
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from agentguard.facts.dockerfile import DockerfileFacts, Stage

# $$ (compose's literal $), ${NAME<op>word}, $NAME
_REF = re.compile(
    r"\$\$|\$\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*)(?P<op>:?[-+?=])?(?P<word>[^}]*)\}"
    r"|\$(?P<bare>[A-Za-z_][A-Za-z0-9_]*)"
)


@dataclass(frozen=True)
class Expanded:
    """``value`` None: unknown; ``unknown`` names the variables without a value, ``used``
    says where each known one came from."""

    value: str | None
    unknown: tuple[str, ...] = ()
    used: tuple[str, ...] = ()


def expand(text: str, lookup: Callable[[str], tuple[str | None, str] | None]) -> Expanded:
    """Replace each reference in ``text``. ``lookup(name)`` gives (value, where) for a variable
    the file sets (value None: declared without a value), or None when nothing sets it.

    ``${X:-word}``/``${X-word}`` take ``word`` when X is not set (the value the file shows);
    ``${X:+word}``, ``${X:?err}`` and a variable nothing sets are unknown.
    """
    unknown: list[str] = []
    used: list[str] = []

    def one(m: re.Match[str]) -> str:
        if m.group(0) == "$$":
            return "$"
        name = m.group("braced") or m.group("bare")
        op = m.group("op") or ""
        found = lookup(name)
        value = found[0] if found is not None else None
        if value is not None and found is not None:  # the file gives the value
            empty = op.startswith(":") and not value
            if op.endswith("+"):
                return "" if empty else m.group("word")
            if not empty:
                used.append(found[1])
                return value
        if op.endswith(("-", "=")):  # not set (or empty): the default the file shows
            used.append(f"the default in `{m.group(0)}`")
            return m.group("word")
        unknown.append(name)
        return ""

    out = _REF.sub(one, text)
    if unknown:
        return Expanded(None, tuple(dict.fromkeys(unknown)), tuple(used))
    return Expanded(out, (), tuple(dict.fromkeys(used)))


def expand_compose(text: str) -> Expanded:
    """A compose value: the environment compose runs in is unknown; a default is read as shown."""
    return expand(text, lambda name: None)


def _chain(df: DockerfileFacts, stage: Stage) -> list[Stage]:
    """``stage`` and the earlier stages it is built FROM, base first."""
    chain: list[Stage] = []
    current: Stage | None = stage
    while current is not None and current not in chain:
        chain.append(current)
        parent = df.stage_named(current.base)
        current = parent if parent is not None and parent.index < current.index else None
    return list(reversed(chain))


def dockerfile_env(
    df: DockerfileFacts, stage: Stage, before_line: int
) -> Mapping[str, tuple[str | None, str]]:
    """ENV/ARG in force in ``stage`` at ``before_line``: ENV of the stages it is built from,
    then its own ENV/ARG in order (an ARG without a default takes the global ARG's default).
    ENV wins over an ARG of the same name, as in Docker. An ARG default is read as the value
    a plain build uses (a ``--build-arg`` may choose another, and says so where it is given).
    """
    global_args = {a.name: a.value for a in df.global_args}
    env: dict[str, tuple[str | None, str]] = {}
    env_names: set[str] = set()
    for s in _chain(df, stage):
        own = s is stage
        for setting in s.env:
            if own and setting.line >= before_line:
                break
            if setting.instruction == "ENV":
                raw = setting.value or ""
                got = expand(raw, env.get)
                env[setting.name] = (got.value, f"ENV {setting.name} (line {setting.line})")
                env_names.add(setting.name)
            elif own and setting.name not in env_names:
                value = setting.value
                if value is None:
                    value = global_args.get(setting.name)
                got = expand(value, env.get) if value is not None else Expanded(None)
                where = f"the default of ARG {setting.name} (line {setting.line})"
                env[setting.name] = (got.value, where)
    return env
