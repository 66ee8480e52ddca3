"""Containers whose own start runs an agent app (facts for the map; nothing here judges).

A compose service is an agent service when (the strongest first, each kept as evidence):

- its ``command``/``entrypoint`` starts an agent engine (high): ``claude``, ``codex``,
  ``gemini``, ``aider``, ``openhands`` in command position (after ``exec``, ``env``,
  ``npx -y``, ``uvx``, ``pipx run``, ``poetry run``, inside ``sh -c '...'``), their npm
  packages (``@anthropic-ai/claude-code``...), ``python -m openhands...``/``-m aider``, or
  an ASGI server serving an agent's module (``uvicorn openhands.server.listen:app``);
- the ``CMD``/``ENTRYPOINT`` of the Dockerfile it builds does, where its own file does not
  replace them (medium: a ``docker compose run`` or an entrypoint script may start
  something else);
- its image is an agent app's published image (medium), or only its name is an agent's
  (``openhands:dev``: low).

A Dockerfile no service builds whose ``CMD``/``ENTRYPOINT`` starts an engine is one too
(medium). Anything else says nothing: not an agent service (unknown, never drawn).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping, Sequence

from agentguard import redact
from agentguard.facts.agent_services import AgentService
from agentguard.facts.agents import CODEX, GEMINI, OPENHANDS
from agentguard.facts.capabilities import Evidence
from agentguard.facts.compose import ComposeFile, ComposeService
from agentguard.facts.dockerfile import DockerfileFacts, StartStep
from agentguard.findings import Confidence
from agentguard.inspect.project.shell_words import shell_words

CLAUDE = "claude CLI"
AIDER = "aider"

_COMMANDS = {"claude": CLAUDE, "codex": CODEX, "gemini": GEMINI, "aider": AIDER,
             "openhands": OPENHANDS}  # fmt: skip
_PACKAGES = {"@anthropic-ai/claude-code": CLAUDE, "@openai/codex": CODEX,
             "@google/gemini-cli": GEMINI, "openhands-ai": OPENHANDS, "aider-chat": AIDER,
             "aider-install": AIDER}  # fmt: skip
_MODULES = {"openhands": OPENHANDS, "aider": AIDER}
_PREFIXES = frozenset({"exec", "env", "sudo", "tini", "dumb-init", "--", "nohup", "time"})
_RUNNERS = {"npx": 1, "bunx": 1, "pnpx": 1, "uvx": 1, "pipx": 2, "poetry": 2, "uv": 2,
            "pdm": 2, "pnpm": 2, "yarn": 2, "npm": 2}  # fmt: skip
_VALUED = frozenset({"--from", "--with", "-p", "--package", "--python", "--spec", "--index"})
_ASGI = frozenset({"uvicorn", "gunicorn", "hypercorn", "daphne"})
_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ash"})
_SPLIT = re.compile(r"&&|\|\||[;|&\n]")
_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")

# published images of agent apps (registry/repository, tag and digest dropped)
KNOWN_IMAGES = {
    "docker.all-hands.dev/all-hands-ai/openhands": OPENHANDS,
    "docker.all-hands.dev/openhands/openhands": OPENHANDS,
    "docker.openhands.dev/openhands/openhands": OPENHANDS,
    "ghcr.io/all-hands-ai/openhands": OPENHANDS,
    "ghcr.io/openhands/openhands": OPENHANDS,
    "paulgauthier/aider": AIDER,
    "paulgauthier/aider-full": AIDER,
}
# an image's last name that is an agent's own (a local tag: only the name says so)
_NAMES = {"openhands": OPENHANDS, "openhands-app": OPENHANDS, "aider": AIDER,
          "aider-full": AIDER, "claude-code": CLAUDE, "gemini-cli": GEMINI,
          "codex-cli": CODEX}  # fmt: skip


def engines_started(words: Sequence[str], depth: int = 0) -> list[tuple[str, str]]:
    """(engine, the simple command that starts it) for each engine a command starts."""
    out: list[tuple[str, str]] = []
    for part in _simple_commands(words):
        hit = _engine_of(part, depth)
        for h in hit:
            if h not in out:
                out.append(h)
    return out


def _simple_commands(words: Sequence[str]) -> list[list[str]]:
    """Each simple command of ``words`` (one shell-form text is split into words here)."""
    if len(words) == 1 and (" " in words[0] or _SPLIT.search(words[0])):
        out: list[list[str]] = []
        for chunk in _SPLIT.split(words[0]):
            got = [w for w, _q in shell_words(chunk)]
            if got:
                out.append(got)
        return out
    return [list(words)] if words else []


def _engine_of(words: list[str], depth: int) -> list[tuple[str, str]]:
    text = " ".join(words)
    i = 0
    while i < len(words) and (words[i] in _PREFIXES or _ASSIGN.match(words[i])):
        i += 1
    if i >= len(words):
        return []
    first = posixpath.basename(words[i])
    if first in _SHELLS and "-c" in words[i + 1 : i + 3]:
        at = words.index("-c", i + 1)
        return engines_started(words[at + 1 : at + 2], depth + 1) if depth < 2 else []
    runner = _RUNNERS.get(first)
    if runner is not None:
        i += runner  # the package manager and its verb (`pipx run`, `npm exec`)
        while i < len(words) and words[i].startswith("-"):
            i += 2 if words[i] in _VALUED and i + 1 < len(words) else 1
        if i >= len(words):
            return []
        name = re.sub(r"(?<=.)@[^/]*$", "", words[i])  # the version (`@openai/codex@0.5`)
        engine = _PACKAGES.get(name) or _COMMANDS.get(posixpath.basename(name))
        return [(engine, _show(text))] if engine else []
    if re.fullmatch(r"python[\d.]*", first):
        if "-m" in words[i + 1 :]:
            at = words.index("-m", i + 1)
            mod = words[at + 1].split(".")[0] if at + 1 < len(words) else ""
            return [(_MODULES[mod], _show(text))] if mod in _MODULES else []
        return []
    if first in _ASGI:
        apps = [w for w in words[i + 1 :] if not w.startswith("-") and ":" in w]
        mod = apps[0].split(".")[0].split(":")[0] if apps else ""
        return [(_MODULES[mod], _show(text))] if mod in _MODULES else []
    engine = _COMMANDS.get(first)
    return [(engine, _show(text))] if engine else []


def _show(text: str) -> str:
    return redact.text(text)[:160]


def image_engine(image: str | None) -> tuple[str, Confidence] | None:
    """The agent app an image reference names: its published image (medium), or only its
    name (low). None: it names none, or the reference is interpolated (not read)."""
    if not image or "$" in image:
        return None
    ref = image.split("@", 1)[0].lower()
    last = ref.rsplit("/", 1)[-1]
    if ":" in last:
        ref = ref[: len(ref) - len(last)] + last.split(":", 1)[0]
    for prefix in ("docker.io/library/", "docker.io/", "index.docker.io/"):
        ref = ref.removeprefix(prefix)
    if ref in KNOWN_IMAGES:
        return KNOWN_IMAGES[ref], Confidence.MEDIUM
    name = ref.rsplit("/", 1)[-1]
    return (_NAMES[name], Confidence.LOW) if name in _NAMES else None


def dockerfile_starts(
    df: DockerfileFacts, keep_entrypoint: bool, keep_cmd: bool
) -> list[StartStep]:
    if df.final is None:
        return []
    entrypoint, cmd = df.effective_start(df.final)
    return [
        s
        for s, keep in ((entrypoint, keep_entrypoint), (cmd, keep_cmd and keep_entrypoint))
        if s is not None and keep
    ]


def from_dockerfile(df: DockerfileFacts, steps: list[StartStep]) -> list[tuple[str, Evidence]]:
    out: list[tuple[str, Evidence]] = []
    wrapper = ""
    for step in steps:
        found = engines_started(step.argv)
        if not found and step.instruction == "ENTRYPOINT":
            wrapper = _show(" ".join(step.argv))
        for engine, text in found:
            note = f"{step.instruction} {text}"
            if wrapper and step.instruction == "CMD":  # (the CMD is the ENTRYPOINT's arguments)
                note += f", handed to ENTRYPOINT {wrapper} (what it does with it: not read)"
            out.append((engine, Evidence(df.path, step.line, note)))
    return out


def _service(
    cf: ComposeFile, svc: ComposeService, df: DockerfileFacts | None
) -> list[AgentService]:
    found: dict[str, list[tuple[Evidence, Confidence, str]]] = {}
    keys = dict(svc.field_lines)
    if svc.command:
        at = keys.get("entrypoint", keys.get("command", svc.line))
        for engine, text in engines_started([svc.command]):
            ev = Evidence(cf.path, at, f"starts {text}")
            found.setdefault(engine, []).append((ev, Confidence.HIGH, f"its command starts {text}"))
    if df is not None:
        steps = dockerfile_starts(df, "entrypoint" not in keys, "command" not in keys)
        for engine, ev in from_dockerfile(df, steps):
            how = f"the image it builds from {df.path} starts {ev.note} (line {ev.line})"
            found.setdefault(engine, []).append((ev, Confidence.MEDIUM, how))
    named = image_engine(svc.image)
    if named is not None:
        engine, conf = named
        what = "an agent app's published image" if conf is Confidence.MEDIUM else "only its name"
        ev = Evidence(cf.path, keys.get("image", svc.line), f"image: {svc.image}")
        found.setdefault(engine, []).append((ev, conf, f"its image {svc.image} ({what})"))
    return [
        service_record(
            engine, items, cf.path, svc.name, df.path if df else None, svc.image, svc.line
        )
        for engine, items in found.items()
    ]


_ORDER = {Confidence.HIGH: 0, Confidence.MEDIUM: 1, Confidence.LOW: 2}


def service_record(
    engine: str,
    items: list[tuple[Evidence, Confidence, str]],
    compose_path: str | None,
    service: str | None,
    dockerfile: str | None,
    image: str | None,
    line: int | None,
) -> AgentService:
    items = sorted(items, key=lambda t: _ORDER.get(t[1], 3))
    starts = [ev.note for ev, _c, _h in items if not ev.note.startswith("image: ")]
    return AgentService(
        engine=engine,
        compose_path=compose_path,
        service=service,
        dockerfile=dockerfile,
        image=image,
        line=line,
        evidence=tuple(ev for ev, _c, _h in items),
        confidence=items[0][1],
        how="; ".join(h for _e, _c, h in items),
        command=starts[0] if starts else None,
    )


def agent_services(
    composes: Iterable[ComposeFile],
    dockerfiles: Mapping[str, DockerfileFacts],
    builds: Iterable[tuple[ComposeFile, str, str, str]],
) -> tuple[AgentService, ...]:
    """Every compose service, and every Dockerfile no service builds, that starts an agent
    app. ``builds``: (compose file, service, Dockerfile path, context) of each build."""
    built = {(id(cf), svc): df for cf, svc, df, _ctx in builds}
    out: list[AgentService] = []
    for cf in composes:
        for svc in cf.services:
            df_path = built.get((id(cf), svc.name))
            out += _service(cf, svc, dockerfiles.get(df_path) if df_path else None)
    used = set(built.values())
    for path, df in dockerfiles.items():
        if path in used:
            continue
        by_engine: dict[str, list[tuple[Evidence, Confidence, str]]] = {}
        for engine, ev in from_dockerfile(df, dockerfile_starts(df, True, True)):
            how = f"its image starts {ev.note} (line {ev.line}; no compose service builds it)"
            by_engine.setdefault(engine, []).append((ev, Confidence.MEDIUM, how))
        for engine, items in by_engine.items():
            out.append(service_record(engine, items, None, None, path, None, items[0][0].line))
    return tuple(out)
