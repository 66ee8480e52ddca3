"""Install facts: pip/uv install commands found in shell text, and requirement declarations.

Shell text comes from Dockerfile RUN lines (build time), compose ``command``/``entrypoint``
and devcontainer lifecycle commands (start time). Requirements come from requirements
files, ``pyproject.toml`` and the install commands themselves. Pure parsing, no I/O.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Mapping

from agentguard import redact
from agentguard.facts.installs import InstallCommand as InstallCommand
from agentguard.facts.installs import RequirementDecl as RequirementDecl
from agentguard.facts.installs import RequirementsFile as RequirementsFile
from agentguard.facts.installs import poetry_to_pep440 as poetry_to_pep440
from agentguard.tomllines import TomlLines

_CONTROL = {"&&", "||", ";", "|", "&", "(", ")", ";;"}
_VALUE_OPTS = {
    "-i", "--index-url", "--extra-index-url", "-f", "--find-links", "-t", "--target",
    "--prefix", "--root", "--python", "-p", "--platform", "--python-version",
    "--implementation", "--abi", "--src", "--upgrade-strategy", "--progress-bar",
    "--cache-dir", "--log", "--trusted-host", "--config-settings", "-C", "--global-option",
    "--only-binary", "--no-binary", "--index-strategy", "--extra", "--group", "--index",
    "--default-index", "--python-platform", "--exclude-newer", "--keyring-provider",
    "--resolution", "--prerelease", "--link-mode", "--override", "--build-constraint",
    "--build-constraints", "--overrides", "--retries", "--timeout", "--proxy", "--cert",
    "--client-cert", "--root-user-action", "--report", "--use-feature", "--use-deprecated",
}  # fmt: skip
_ENV_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_PIP = re.compile(r"^pip(\d+(\.\d+)?)?$")
_PYTHON = re.compile(r"^python(\d+(\.\d+)?)?$")
_GUARD_ENV = {
    "PIP_REQUIRE_HASHES": "require_hashes",
    "PIP_CONSTRAINT": "constraint",
    "UV_CONSTRAINT": "constraint",
    "PIP_NO_DEPS": "no_deps",
    "UV_REQUIRE_HASHES": "require_hashes",
}


def _tokens(line: str) -> list[str]:
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        return list(lexer)
    except ValueError:  # unbalanced quotes: still look at the words
        return line.split()


def _segments(script: str, depth: int = 0) -> Iterable[tuple[int, list[str]]]:
    """(line offset, words) of each simple command in ``script``."""
    logical: list[tuple[int, str]] = []
    buf: list[str] = []
    start = 0
    for i, raw in enumerate(script.split("\n")):
        if not buf:
            start = i
        if raw.rstrip().endswith("\\"):
            buf.append(raw.rstrip()[:-1])
            continue
        buf.append(raw)
        logical.append((start, " ".join(buf)))
        buf = []
    if buf:
        logical.append((start, " ".join(buf)))
    for offset, text in logical:
        words: list[str] = []
        for tok in [*_tokens(text), ";"]:
            if tok in _CONTROL or set(tok) <= set("&|;()"):
                if words:
                    yield from _unwrap_shell(offset, words, depth)
                words = []
            else:
                words.append(tok)


_SHELLS = frozenset({"sh", "bash", "ash", "dash", "zsh"})


def _unwrap_shell(offset: int, words: list[str], depth: int) -> Iterable[tuple[int, list[str]]]:
    """``sh -c 'a && b'``: the commands inside the script, not the shell call."""
    if depth < 3 and words[0].rsplit("/", 1)[-1] in _SHELLS and "-c" in words[1:-1]:
        script = words[words.index("-c", 1) + 1]
        for inner_offset, inner in _segments(script, depth + 1):
            yield offset + inner_offset, inner
        return
    yield offset, words


def _command_words(words: list[str]) -> tuple[str, list[str]] | None:
    """(tool, arguments after ``install``) when ``words`` is an install command."""
    i = 0
    while i < len(words) and (
        _ENV_ASSIGN.match(words[i]) or words[i] in ("sudo", "exec", "env", "command", "time")
    ):
        i += 1
    w = [x.rsplit("/", 1)[-1] if k == i else x for k, x in enumerate(words)][i:]
    if not w:
        return None
    if _PYTHON.match(w[0]) and len(w) >= 3 and w[1] == "-m":
        w = w[2:]
    if _PIP.match(w[0]) and len(w) >= 2 and w[1] == "install":
        return "pip", w[2:]
    if w[0] == "uv" and len(w) >= 3 and w[1] == "pip" and w[2] == "install":
        return "uv pip", w[3:]
    if w[0] == "pipx" and len(w) >= 2 and w[1] == "install":
        return "pipx", w[2:]
    if w[0] == "uv" and len(w) >= 3 and w[1] == "tool" and w[2] == "install":
        return "uv tool", w[3:]
    if w[0] == "uv" and len(w) >= 2 and w[1] == "sync":
        return "uv sync", w[2:]
    return None


def _parse_args(args: list[str]) -> dict[str, list[str] | bool]:
    out: dict[str, list[str] | bool] = {
        "packages": [],
        "req": [],
        "con": [],
        "hashes": False,
        "nodeps": False,
    }
    i = 0
    while i < len(args):
        a = args[i]
        nxt = args[i + 1] if i + 1 < len(args) else None
        for short, long, key in (("-r", "--requirement", "req"), ("-c", "--constraint", "con")):
            if a in (short, long, f"{long}s") and nxt is not None:
                out[key].append(nxt)  # type: ignore[union-attr]
                i += 1
                break
            if a.startswith(f"{long}=") or a.startswith(f"{long}s="):
                out[key].append(a.split("=", 1)[1])  # type: ignore[union-attr]
                break
            if a.startswith(short) and len(a) > 2 and not a.startswith("--"):
                out[key].append(a[2:])  # type: ignore[union-attr]
                break
        else:
            if a == "--require-hashes":
                out["hashes"] = True
            elif a == "--no-deps":
                out["nodeps"] = True
            elif a in ("-e", "--editable") and nxt is not None:
                out["packages"].append(nxt)  # type: ignore[union-attr]
                i += 1
            elif a in _VALUE_OPTS:
                i += 1
            elif not a.startswith("-"):
                out["packages"].append(a)  # type: ignore[union-attr]
        i += 1
    return out


def find_installs(
    script: str,
    *,
    path: str,
    line: int,
    phase: str,
    env: Mapping[str, str | None] | None = None,
    line_offsets: bool = True,
) -> list[InstallCommand]:
    """Every install command in ``script`` (line = ``line`` + offset within the script)."""
    guards = tuple(sorted(k for k, v in (env or {}).items() if k in _GUARD_ENV and v))
    found: list[InstallCommand] = []
    for offset, words in _segments(script):
        cmd = _command_words(words)
        if cmd is None:
            continue
        tool, args = cmd
        if tool == "uv sync":  # installs the project's lock, or resolves one: no packages
            locked = bool({"--locked", "--frozen"} & set(args)) or any(
                k in ("UV_LOCKED", "UV_FROZEN") and v for k, v in (env or {}).items()
            )
            found.append(
                InstallCommand(
                    tool=tool,
                    text=redact.url(" ".join(words)),
                    path=path,
                    line=line + offset if line_offsets else line,
                    phase=phase,
                    packages=(),
                    requirement_files=(),
                    constraint_files=(),
                    require_hashes=False,
                    no_deps=False,
                    locked=locked,
                )
            )
            continue
        parsed = _parse_args(args)
        found.append(
            InstallCommand(
                tool=tool,
                text=redact.url(" ".join(words)),
                path=path,
                line=line + offset if line_offsets else line,
                phase=phase,
                packages=tuple(parsed["packages"]),  # type: ignore[arg-type]
                requirement_files=tuple(parsed["req"]),  # type: ignore[arg-type]
                constraint_files=tuple(parsed["con"]),  # type: ignore[arg-type]
                require_hashes=bool(parsed["hashes"]),
                no_deps=bool(parsed["nodeps"]),
                env_guards=guards,
            )
        )
    return found


def parse_requirement(raw: str, *, path: str, line: int | None, origin: str) -> RequirementDecl:
    # (packaging is imported where a requirement is met: not by every project scan)
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    text = raw.split(";", 1)[0].strip() if "://" not in raw else raw.strip()
    try:
        req = Requirement(raw.strip())
    except InvalidRequirement:
        return RequirementDecl(text, None, "", path, line, origin)
    return RequirementDecl(
        raw.strip(), canonicalize_name(req.name), str(req.specifier), path, line, origin
    )


_GENERATED = re.compile(
    r"(?im)^#.*(autogenerated by pip-compile|uv pip compile|uv export|pip-compile|pdm export|poetry export)"
)


def parse_requirements_file(path: str, text: str) -> RequirementsFile:
    """A pip requirements file; lines pip would reject are kept as unnamed requirements."""
    reqs: list[RequirementDecl] = []
    includes: list[str] = []
    constraints: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        start = i + 1
        logical = lines[i]
        while logical.rstrip().endswith("\\") and i + 1 < len(lines):
            i += 1
            logical = logical.rstrip()[:-1] + " " + lines[i]
        i += 1
        body = re.sub(r"(^|\s)#.*$", "", logical).strip()
        if not body:
            continue
        words = body.split()
        first = words[0]
        if first in ("-r", "--requirement") and len(words) > 1:
            includes.append(words[1])
            continue
        if first in ("-c", "--constraint") and len(words) > 1:
            constraints.append(words[1])
            continue
        if first.startswith(("--requirement=", "--constraint=")):
            (includes if first.startswith("--r") else constraints).append(first.split("=", 1)[1])
            continue
        if first.startswith("-") and first not in ("-e", "--editable"):
            continue  # an option line (--index-url, --hash continuation, ...)
        spec = " ".join(w for w in words if not w.startswith("--"))
        if first in ("-e", "--editable"):
            spec = " ".join(words[1:2])
        decl = parse_requirement(spec, path=path, line=start, origin="requirements")
        hashed = "--hash" in body
        reqs.append(
            RequirementDecl(
                decl.raw, decl.name, decl.specifier, path, start, "requirements", hashed
            )
        )
    named = [r for r in reqs if r.name]
    return RequirementsFile(
        path=path,
        requirements=tuple(reqs),
        includes=tuple(includes),
        constraints=tuple(constraints),
        all_hashed=bool(reqs) and all(r.hashed for r in reqs),
        all_pinned=bool(named)
        and len(named) == len(reqs)
        and all(re.fullmatch(r"===?[^,]+", r.specifier) for r in named),
        generated_lock=bool(_GENERATED.search(text)),
    )


def pyproject_requirements(
    path: str, text: str, data: Mapping[str, object]
) -> list[RequirementDecl]:
    """Requirements in ``[project]``, ``[dependency-groups]`` and ``[tool.poetry]``; never
    the project itself (``smolagents[all]`` in smolagents' own extras: an extra made of
    others, which installs this project, not a release an index can move)."""
    from packaging.utils import canonicalize_name

    strings: list[str] = []
    project = data.get("project")
    named = project.get("name") if isinstance(project, dict) else None
    own = canonicalize_name(named) if isinstance(named, str) else None
    if isinstance(project, dict):
        deps = project.get("dependencies")
        if isinstance(deps, list):
            strings.extend(d for d in deps if isinstance(d, str))
        opt = project.get("optional-dependencies")
        if isinstance(opt, dict):
            for group in opt.values():
                if isinstance(group, list):
                    strings.extend(d for d in group if isinstance(d, str))
    groups = data.get("dependency-groups")
    if isinstance(groups, dict):
        for group in groups.values():
            if isinstance(group, list):
                strings.extend(d for d in group if isinstance(d, str))
    out: list[RequirementDecl] = []
    lines = TomlLines(text)
    for s in strings:
        decl = parse_requirement(s, path=path, line=lines.next(s), origin="pyproject")
        if own is None or decl.name != own:
            out.append(decl)
    tool = data.get("tool")
    poetry = tool.get("poetry") if isinstance(tool, dict) else None
    pdeps = poetry.get("dependencies") if isinstance(poetry, dict) else None
    if isinstance(pdeps, dict):
        for name, spec in pdeps.items():
            if name == "python" or canonicalize_name(name) == own:
                continue
            version = spec.get("version") if isinstance(spec, dict) else spec
            if not isinstance(version, str):
                continue  # git/path/url dependencies: pinned by source, not by range
            line = lines.key(name)
            out.append(
                RequirementDecl(
                    f"{name} = {version!r}",
                    canonicalize_name(name),
                    poetry_to_pep440(version),
                    path,
                    line,
                    "pyproject",
                )
            )
    return out
