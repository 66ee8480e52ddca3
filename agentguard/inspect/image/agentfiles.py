"""The agent an image runs, found in what one pass collected: files for the agent rules.

Follows the config's command line (:mod:`.agentplan`) through the merged filesystem:
symlinks, ``PATH``, shebangs, shell wrappers' ``exec`` lines; picks the image user's
``HOME`` from ``/etc/passwd``; adds managed settings and the user's Claude settings and
``~/.claude.json``. Every launch it cannot follow is a skipped source with the reason,
never silence. Pure: takes :class:`ImageFacts`, returns frozen facts. The walk's state and
the launches that end it (a module, an agent CLI) are :mod:`.agentwalk`.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass, field

from agentguard.findings import JSONValue, Source
from agentguard.inspect.facts import FileContent, FileEntry, ImageFacts
from agentguard.inspect.image.agentconfig import agent_clis, claude_env, config_files, user_home
from agentguard.inspect.image.agentlaunch import SCRIPT_SUFFIXES, Launch, read_launch
from agentguard.inspect.image.agentlinks import ImagePaths
from agentguard.inspect.image.agentplan import plan_for, source_tree
from agentguard.inspect.image.agentshell import WRAPPER_ARGS, exec_lines
from agentguard.inspect.image.agentwalk import (
    AgentFile,
    Walk,
    cli_of_path,
    follow_cli,
    follow_module,
    installed_cli_defaults,
    package_present,
    record,
    shown,
    skip,
)
from agentguard.inspect.image.imageconfig import effective_workdir
from agentguard.inspect.project.model import AgentConfig

MAX_DEPTH = 4  # wrapper -> wrapper -> ... before giving up


@dataclass(frozen=True)
class ImageAgent:
    """What the image runs and the files that configure it."""

    files: tuple[AgentFile, ...] = ()
    configs: tuple[AgentConfig, ...] = ()  # agent CLIs started without flags: their defaults
    sources: tuple[Source, ...] = ()
    facts: dict[str, JSONValue] = field(default_factory=dict)
    # Where links lead that the read did not collect (agentplan.link_plan notation): a
    # second read collects them (each is a failed source until then).
    unread: tuple[str, ...] = ()


def find_agent(
    image: ImageFacts,
    *,
    env: Sequence[tuple[str, str]] | None = None,
    workdir: str | None = None,
    argv: tuple[Sequence[str] | None, Sequence[str] | None] | None = None,
) -> ImageAgent:
    """``env``/``workdir``/``argv`` (entrypoint, cmd): a container's, which override the
    image's."""
    cfg = image.config
    env_map = dict(cfg.env)
    env_map.update(dict(env or ()))
    wd = effective_workdir(workdir if workdir else (cfg.workdir or ""))
    entrypoint, cmd = argv if argv is not None else (cfg.entrypoint, cfg.cmd)
    plan = plan_for(entrypoint, cmd, tuple(env_map.items()), wd)
    walk = Walk(
        image=image,
        plan=plan,
        env=env_map,
        cwd="/" + wd,
        paths=ImagePaths(image, plan),
    )
    if not plan.launches:
        walk.sources.append(
            Source.skipped(
                "image-agent", image.target, "the image config sets no ENTRYPOINT or CMD"
            )
        )
    for launch in plan.launches:
        _follow(walk, launch, "the image's ENTRYPOINT/CMD", 0)
    home = user_home(env_map, cfg.user, walk.paths, walk.sources)
    for content, why in config_files(env_map, home, walk.paths):
        walk.add(content, why)
    clis = agent_clis(walk.by_path, walk.entries)
    installed_cli_defaults(walk, clis)
    facts: dict[str, JSONValue] = {
        "launches": walk.followed,
        "home": home,
        "files": [
            {"path": f.content.path, "layer": f.content.layer_digest, "why": f.why}
            for f in sorted(walk.files.values(), key=lambda f: f.content.path)
        ],
        "agent_clis": clis,
        "claude_env": claude_env(env_map),
    }
    if image.speculative_dropped:
        facts["wrapper_candidates_not_kept"] = image.speculative_dropped
    if walk.paths.unread:
        facts["links_not_followed"] = sorted(walk.paths.unread)
    return ImageAgent(
        files=tuple(sorted(walk.files.values(), key=lambda f: f.content.path)),
        configs=tuple(walk.configs),
        sources=(*walk.sources, *walk.paths.sources),
        facts=facts,
        unread=tuple(sorted(walk.paths.unread)),
    )


def _follow(walk: Walk, launch: Launch, via: str, depth: int) -> None:
    if depth > MAX_DEPTH:
        skip(walk, launch, f"more than {MAX_DEPTH} wrappers deep: not followed")
        return
    if launch.kind == "cli":
        follow_cli(walk, launch)
    elif launch.kind == "module":
        follow_module(walk, launch)
    elif launch.kind == "inline":
        if launch.interpreter != "shell":
            skip(walk, launch, "python -c code in the command line: not analysed")
            return
        _wrapper_text(walk, launch, launch.inline or "", "the `sh -c` command line", depth, ())
    elif launch.kind in ("script", "program"):
        _program(walk, launch, via, depth)
    else:
        skip(walk, launch, "the command line names no script, module or program to follow")


def _program(walk: Walk, launch: Launch, via: str, depth: int) -> None:
    candidates = launch.candidates or ((launch.target,) if launch.target else ())
    found: tuple[str, FileEntry | None, FileContent | None] | None = None
    for cand in candidates:
        res = walk.paths.resolve(cand)
        cli = cli_of_path(res.path) if res.ok and package_present(walk, res.path) else None
        if cli is not None:  # an agent CLI's launcher: its flags, not its code
            follow_cli(walk, Launch("cli", launch.argv, target=res.path, interpreter=cli))
            return
        opened = walk.paths.open(cand)
        if opened.state in ("failed", "unread"):
            # (a failed source says why; the next PATH entry is not taken for it)
            walk.followed.append(
                {"argv": shown(launch.argv), "kind": launch.kind, "followed": "not followed"}
            )
            return
        if opened.state == "found":
            found = (opened.path, opened.entry, opened.content)
            break
    if found is None:
        skip(walk, launch, _not_found(walk, launch.target or "", candidates))
        return
    path, entry, content = found
    if content is None:
        kind = entry.kind if entry is not None else "file"
        reason = (
            f"{path} is a {kind} whose content was not collected (a link target outside "
            "the folders read, or over a cap)"
        )
        skip(walk, launch, reason)
        return
    data = content.data
    if data.startswith(b"\x7fELF"):
        skip(
            walk, launch, f"{path} is a compiled program (ELF): agentguard cannot read its settings"
        )
        return
    interpreter = launch.interpreter if launch.kind == "script" else None
    if data.startswith(b"#!"):
        shebang = data[2:].split(b"\n", 1)[0].decode("utf-8", "replace").split()
        if shebang:
            inner = read_launch([*shebang, path], walk.env, walk.cwd)
            interpreter = inner.interpreter or interpreter
    if interpreter is None:
        if not path.endswith(SCRIPT_SUFFIXES) and b"\0" in data[:1024]:
            skip(walk, launch, f"{path} is a binary file agentguard cannot read")
            return
        interpreter = "shell"
    if interpreter == "shell":
        walk.add(content, f"shell wrapper started by {via}")
        record(walk, launch, f"shell wrapper {path}")
        args = _wrapper_args(walk, launch)
        _wrapper_text(walk, launch, data.decode("utf-8", "replace"), path, depth, args)
        return
    walk.add(content, f"agent script started by {via}")
    record(walk, launch, f"script {path}")
    tree = source_tree(path)
    if tree is not None and not _tree_read(walk, launch, tree):
        return
    if tree is None:
        walk.sources.append(
            Source.skipped(
                "image-agent",
                path,
                "in a system or bin folder: the modules it imports from elsewhere are not read",
            )
        )
        return
    for other in walk.by_path.values():
        # (collected for its tree, a wrapper's target, or the working directory)
        if other.path.startswith(tree + "/") and other.path.endswith(SCRIPT_SUFFIXES):
            walk.add(other, f"source tree of {path}")


def _tree_read(walk: Walk, launch: Launch, tree: str) -> bool:
    """Whether the script's source tree was collected: a tree reached through links (the
    config names /app/bot.py, /app links to /opt/real) is collected by a second read."""
    literal = source_tree(launch.target or "") if launch.kind == "script" else None
    if literal == tree:
        return True
    return walk.paths.need_folder(tree, "/", f"the source tree {tree} of {launch.target}")


def _not_found(walk: Walk, target: str, candidates: Sequence[str]) -> str:
    """Why a program is not there: absent (the pass looked), or not collected (it did not)."""
    if not walk.image.symlinks_complete:
        return walk.paths.incomplete(target)
    looked = [walk.plan.wants(posixpath.normpath(c).lstrip("/")) for c in candidates]
    if all(w == "exact" for w in looked):
        where = "in the image's PATH" if len(candidates) > 1 else "in the image"
        return f"{target} is not {where}: nothing to follow"
    if all(w in ("exact", "code", "speculative") for w in looked):
        if not walk.image.speculative_dropped:
            return f"{target} is not in the image as a regular file: nothing to follow"
        return (
            f"{target} was not collected: {walk.image.speculative_dropped} candidate files "
            "for what a wrapper runs were over the cap (read what it runs directly)"
        )
    return (
        f"{target} was not collected in the one pass: a wrapper names it, and it is in a "
        "system folder the pass does not read for a wrapper's targets"
    )


def _wrapper_args(walk: Walk, launch: Launch) -> tuple[str, ...]:
    """The arguments a wrapper script receives (its ``"$@"``): what follows it."""
    if launch.kind == "program":
        return launch.argv[1:]
    for i, tok in enumerate(launch.argv):
        if launch.target and posixpath.normpath(posixpath.join(walk.cwd, tok)) == launch.target:
            return launch.argv[i + 1 :]
    return ()


def _wrapper_text(
    walk: Walk, launch: Launch, text: str, where: str, depth: int, args: tuple[str, ...]
) -> None:
    lines = exec_lines(text)
    if not lines:
        skip(walk, launch, f"{where} runs no command agentguard can read")
        return
    for _line, raw in lines:
        words: list[str] = []
        for w in raw:
            words += list(args) if w in WRAPPER_ARGS else [w]
        if not words:
            skip(walk, launch, f"{where} runs its arguments, and it is given none")
            continue
        inner = read_launch(words, walk.env, walk.cwd)
        if inner.kind == "program" and inner.target and "$" in inner.target:
            skip(walk, inner, f"{where} runs a command built at run time: not followed")
            continue
        _follow(walk, inner, where, depth + 1)
