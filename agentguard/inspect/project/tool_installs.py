"""Installs outside pip/uv that take whatever is current: a global npm install of an agent
CLI without an exact version (or ``@latest``), ``npx`` of one, and a remote script piped
into a shell. Facts only (text in, records out); AG130 judges them."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from agentguard.facts.installs import AGENT_NPM as AGENT_NPM
from agentguard.facts.installs import ToolInstall as ToolInstall

if TYPE_CHECKING:
    from agentguard.facts.compose import ComposeFile
    from agentguard.facts.devcontainer import DevcontainerFacts
    from agentguard.facts.dockerfile import DockerfileFacts

# the words of one command: blanks between them, or a backslash continuing the line (never
# a plain new line: the next line is the next command)
_WORDS = r"((?:(?:[ \t]|\\\n)+[^\s;&|]+)*)"
_NPM_GLOBAL = re.compile(
    r"\b(?:npm\s+(?:install|i|add)|pnpm\s+(?:add|install|i)|bun\s+(?:add|install|i))" + _WORDS,
)
_YARN_GLOBAL = re.compile(r"\byarn\s+global\s+add" + _WORDS)
_NPX = re.compile(r"\b(?:npx|pnpx|bunx)((?:\s+-[^\s;&|]+)*)\s+([^\s;&|-][^\s;&|]*)")
_PIPE_SHELL = re.compile(
    r"\b(curl|wget)\s[^|;&]*?(https?://[^\s|;&'\"]+)[^|;&]*\|\s*(?:sudo\s+(?:-\S+\s+)*)?"
    r"(?:env\s+)?(?:[A-Za-z_]\w*=\S*\s+)*((?:ba|z|da)?sh\b|(?:python[23]?(?:\.\d+)?|node)"
    # an interpreter that runs its standard input (`| python -`, `| python3`), not one that
    # parses it (`| python -c "import json ..."`, `| node -e ...`)
    r"(?=\s+-(?:\s|$)|\s*(?:$|[;&|)\"'\n])))"
)
# the download run by a shell without a pipe: `sh -c "$(curl -fsSL URL)"` (also with
# VAR=value words before it, as OpenHands' micromamba step has), `eval "$(curl URL)"`,
# `bash <(curl URL)`
_SUBST_SHELL = re.compile(
    r"(?:\b(?:ba|z|da)?sh\s+(?:-[a-z]+\s+)*-[a-z]*c\s+[\"']?(?:[A-Za-z_]\w*=\S*\s+)*"
    r"|\beval\s+[\"']?|\b(?:ba|z|da)?sh\s+)[$<]\(\s*(?:curl|wget)\s[^)]*?(https?://[^\s)'\"]+)"
)
_VERSION_SEGMENT = re.compile(r"/v?\d+\.\d+(?:\.\d+)?[^/]*/")
_EXACT = re.compile(r"^v?\d+\.\d+\.\d+(?:[-+][\w.]+)?$")


def _split(spec: str) -> tuple[str, str | None]:
    """``@scope/name@1.2.3`` -> (``@scope/name``, ``1.2.3``); no version -> None."""
    at = spec.rfind("@")
    if at <= 0:
        return spec, None
    return spec[:at], spec[at + 1 :]


def _unpinned(version: str | None) -> str | None:
    if version is None or version == "":
        return "no version"
    if "$" in version:
        return f"a version set at run time ({version})"
    if version in ("*", "x") or version[:1].isalpha():
        return f"@{version}"  # a dist-tag (latest, next, nightly): whatever it points to
    if not _EXACT.match(version):
        return f"the range {version}"
    return None


def _line(base: int, script: str, pos: int, offsets: bool) -> int:
    return base + script[:pos].count("\n") if offsets else base


def find_added_scripts(
    adds: list[tuple[str, str, int]], runs: list[tuple[str, int]], *, path: str
) -> list[ToolInstall]:
    """A piped installer in two steps (aider's benchmark image): ``ADD https://installer.example/rustup.sh
    /tmp/rustup.sh`` then ``RUN /tmp/rustup.sh -y`` (or ``sh /tmp/rustup.sh``).
    ``adds``: (url, file it is saved as, line) of each ADD of a URL without --checksum;
    ``runs``: (script, line) of the RUN steps after it in the same stage."""
    out: list[ToolInstall] = []
    for url, dest, add_line in adds:
        if _VERSION_SEGMENT.search(url):
            continue  # the installer of a named release
        ran = re.compile(
            r"(?:^|[;&|(]\s*|\b(?:ba|z|da)?sh\s+(?:-\w+\s+)*|\bsource\s+|\.\s+)"
            + re.escape(dest)
            + r"(?=\s|$|[;&|)])",
            re.M,
        )
        for script, line in runs:
            if line > add_line and ran.search(script):
                how = f"downloaded by ADD (line {add_line}) and run by RUN, unpinned"
                out.append(ToolInstall("remote-script", url, how, path, line, "build"))
                break
    return out


def find_tool_installs(
    script: str, *, path: str, line: int, phase: str, line_offsets: bool = True
) -> list[ToolInstall]:
    out: list[ToolInstall] = []
    for m in [*_NPM_GLOBAL.finditer(script), *_YARN_GLOBAL.finditer(script)]:
        words = m.group(1).split()
        if not m.group(0).startswith("yarn") and not ({"-g", "--global"} & set(words)):
            continue
        for word in words:
            if word.startswith("-"):
                continue
            name, version = _split(word)
            why = _unpinned(version) if name in AGENT_NPM else None
            if why is not None:
                at = _line(line, script, m.start(), line_offsets)
                out.append(ToolInstall("npm-global", word, why, path, at, phase))
    for m in _NPX.finditer(script):
        name, version = _split(m.group(2))
        why = _unpinned(version) if name in AGENT_NPM else None
        if why is not None:
            at = _line(line, script, m.start(), line_offsets)
            out.append(ToolInstall("npx", m.group(2), why, path, at, phase))
    remote = [
        (m, m.group(2), f"piped into {'a shell' if m.group(3).endswith('sh') else m.group(3)}")
        for m in _PIPE_SHELL.finditer(script)
    ] + [
        (m, m.group(1), f"run by a shell from `{'<' if '<(' in m.group(0) else '$'}(...)`")
        for m in _SUBST_SHELL.finditer(script)
    ]
    for m, url, how in remote:
        if _VERSION_SEGMENT.search(url):
            continue  # the installer of a named release (…/uv/0.5.1/install.sh)
        at = _line(line, script, m.start(), line_offsets)
        out.append(ToolInstall("remote-script", url, f"{how}, unpinned", path, at, phase))
    return sorted(set(out), key=lambda t: (t.line, t.kind, t.what))


def _saved_as(url: str, dest: str) -> str:
    """The file an ``ADD <url> <dest>`` writes (a folder destination keeps the URL's name)."""
    if dest.endswith("/"):
        return dest + (url.rstrip("/").rsplit("/", 1)[-1] or "index.html")
    return dest


def tool_installs_of(
    dockerfiles: Mapping[str, DockerfileFacts],
    composes: Mapping[str, ComposeFile],
    devcontainers: Mapping[str, DevcontainerFacts],
) -> list[ToolInstall]:
    """npm/npx/curl installs in the build steps and start commands of the files read (AG130)."""
    found: list[ToolInstall] = []
    for path, df in dockerfiles.items():
        for stage in df.stages:
            for run in stage.runs:
                found += find_tool_installs(run.script, path=path, line=run.line, phase="build")
            adds = [
                (src, _saved_as(src, c.destination_abs), c.line)
                for c in stage.copies
                if c.instruction == "ADD" and c.checksum is None
                for src in c.sources
                if src.startswith(("http://", "https://"))
            ]
            if adds:
                runs = [(r.script, r.line) for r in stage.runs]
                found += find_added_scripts(adds, runs, path=path)
    for path, cf in composes.items():
        for svc in cf.services:
            if svc.command:
                at = svc.line_of("command") or svc.line_of("entrypoint") or 1
                found += find_tool_installs(
                    svc.command, path=path, line=at, phase="start", line_offsets=False
                )
    for path, dc in devcontainers.items():
        for _key, script, line in dc.commands:
            found += find_tool_installs(
                script, path=path, line=line or 1, phase="start", line_offsets=False
            )
        for _key, script_path, text in dc.scripts:
            found += find_tool_installs(text, path=script_path, line=1, phase="start")
    return found
