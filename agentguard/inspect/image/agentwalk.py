"""One walk from an image's ENTRYPOINT/CMD to the agent it runs (:mod:`.agentfiles`): its
state, how a launch it followed or skipped is recorded, and the launches that end it: a
Python module (``python -m``), an agent CLI (its flags, not its code), and a claude CLI
installed but not started (its defaults). Pure: reads the collected files only.
"""

from __future__ import annotations

import posixpath
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field

from agentguard.findings import JSONValue, Source
from agentguard.inspect.facts import FileContent, FileEntry, ImageFacts
from agentguard.inspect.image.agentlaunch import CLI_PACKAGES, Launch
from agentguard.inspect.image.agentlinks import ImagePaths
from agentguard.inspect.image.agentplan import AgentPlan
from agentguard.inspect.project.model import AgentConfig

CONFIG_PATH = "(image config) ENTRYPOINT/CMD"


@dataclass(frozen=True)
class AgentFile:
    content: FileContent
    why: str  # "entrypoint script", "managed settings", "user MCP configuration", ...


@dataclass
class Walk:
    image: ImageFacts
    plan: AgentPlan
    env: dict[str, str]
    cwd: str
    paths: ImagePaths
    files: dict[str, AgentFile] = field(default_factory=dict)
    configs: list[AgentConfig] = field(default_factory=list)
    sources: list[Source] = field(default_factory=list)
    followed: list[dict[str, JSONValue]] = field(default_factory=list)

    def add(self, content: FileContent, why: str) -> None:
        self.files.setdefault(content.path, AgentFile(content, why))

    @property
    def by_path(self) -> dict[str, FileContent]:
        return self.paths.by_path

    @property
    def entries(self) -> dict[str, FileEntry]:
        return self.paths.entries


def installed_cli_defaults(walk: Walk, clis: list[JSONValue]) -> None:
    """A claude CLI installed globally but not started by the config, with no settings in the
    image: what it does when someone runs it is its defaults (reported, marked ambiguous).
    A project's own dependency on the package is a fact only (its SDK code is checked)."""
    if any(c.engine == "claude CLI" for c in walk.configs):
        return
    if any(f.why.endswith("settings") for f in walk.files.values()):
        return
    for cli in clis:
        if not isinstance(cli, dict) or cli.get("command") != "claude" or not cli.get("global"):
            continue
        where = str(cli.get("path"))
        walk.configs.append(
            AgentConfig(
                engine="claude CLI",
                path=f"{where}/package.json",
                line=1,
                label="claude CLI installed, no settings (the CLI's defaults)",
                ambiguous=True,
                ambiguity="installed in the image, but the image's ENTRYPOINT/CMD does not "
                "start it: it runs only when someone starts it",
                origin=f"image:{cli.get('layer')}",
            )
        )
        walk.sources.append(
            Source.ok(
                "image-agent",
                where,
                "the claude CLI is installed and no settings configure it: checked with "
                "its defaults",
            )
        )
        return


def shown(argv: Sequence[str]) -> str:
    from agentguard.inspect.summary import redact_argv

    return shlex.join(redact_argv(argv) or [])


def skip(walk: Walk, launch: Launch, reason: str) -> None:
    walk.sources.append(Source.skipped("image-agent", shown(launch.argv), reason))
    walk.followed.append({"argv": shown(launch.argv), "kind": launch.kind, "followed": reason})


def record(walk: Walk, launch: Launch, what: str) -> None:
    walk.followed.append({"argv": shown(launch.argv), "kind": launch.kind, "followed": what})
    walk.sources.append(Source.ok("image-agent", shown(launch.argv), f"followed to {what}"))


def follow_module(walk: Walk, launch: Launch) -> None:
    top = (launch.target or "").split(".")[0]
    hits = [
        c
        for c in walk.by_path.values()
        if c.path.endswith(".py")
        and walk.plan.wants(c.path.lstrip("/")) in ("code", "exact")
        and (f"/{top}/" in c.path or c.path.endswith(f"/{top}.py"))
    ]
    if not hits:
        skip(
            walk,
            launch,
            f"module {launch.target}: no {top}/ package or {top}.py in site-packages, the "
            "working directory or PYTHONPATH",
        )
        return
    roots = sorted({c.path.split(f"/{top}", 1)[0] for c in hits})
    for c in hits:
        walk.add(c, f"package {top} run by python -m {launch.target}")
    record(walk, launch, f"package {top} in {', '.join(roots)}")


def cli_of_path(path: str) -> str | None:
    for package, command in CLI_PACKAGES.items():
        if f"/node_modules/{package}/" in path:
            return command
    return None


def follow_cli(walk: Walk, launch: Launch) -> None:
    from agentguard.inspect.project.cli_flags import cli_configs

    name = launch.interpreter or ""
    if name != "claude":
        skip(
            walk,
            launch,
            f"the {name} CLI: its command-line flags are not read from the image config "
            "(its user config in the image is)",
        )
        return
    where = "fetched by the package runner at start"
    if launch.candidates:
        hit: tuple[str, str] | None = None
        for cand in launch.candidates:
            res = walk.paths.resolve(cand)
            if res.ok and package_present(walk, res.path):
                hit = (cand, res.path)
                break
            opened = walk.paths.open(cand)
            if opened.state in ("failed", "unread"):
                return  # (a failed source says why)
            if opened.state == "found":
                hit = (cand, opened.path)
                break
        if hit is None:
            reason = "claude is not in the image's PATH: the container cannot start it"
            if not walk.image.symlinks_complete:
                reason = walk.paths.incomplete("claude in the image's PATH")
            skip(walk, launch, reason)
            return
        where = hit[0] if hit[0] == hit[1] else f"{hit[0]} -> {hit[1]}"
    elif launch.target and launch.target.startswith("/"):
        where = launch.target
    text = shlex.join(["claude", *after_command(launch.argv)])
    configs = cli_configs(CONFIG_PATH, text.encode())
    if not configs:
        configs = [
            AgentConfig(
                engine="claude CLI",
                path=CONFIG_PATH,
                line=1,
                label="claude command line without flags (the CLI's defaults)",
                origin="image:config",
            )
        ]
    walk.configs += configs
    record(walk, launch, f"the claude CLI ({where}); its flags read from the command line")


def package_present(walk: Walk, path: str) -> bool:
    """``path`` lies in an agent CLI package whose package.json is in the image."""
    for package in CLI_PACKAGES:
        marker = f"/node_modules/{package}/"
        if marker in path:
            root = path.split(marker, 1)[0] + marker
            return root + "package.json" in walk.by_path
    return False


def after_command(argv: Sequence[str]) -> list[str]:
    for i, a in enumerate(argv):
        if posixpath.basename(a) == "claude" or a.startswith("@anthropic-ai/claude-code"):
            return list(argv[i + 1 :])
    return list(argv[1:])
