"""The agent's configuration around its code: HOME, managed and user settings, CLIs, ENV.

Pure functions over what one pass collected (:class:`FileContent` by absolute path).
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Mapping

from agentguard.findings import JSONValue, Source
from agentguard.inspect.facts import FileContent, FileEntry
from agentguard.inspect.image.agentlaunch import CLI_PACKAGES
from agentguard.inspect.image.agentlinks import ImagePaths

# Claude Code's documented environment variables that change what its tools may do or
# where its settings come from (values are shown redacted).
CLAUDE_ENV = (
    "CLAUDE_CONFIG_DIR",
    "CLAUDE_CODE_SHELL_PREFIX",
    "CLAUDE_BASH_MAINTAIN_PROJECT_WORKING_DIR",
    "BASH_DEFAULT_TIMEOUT_MS",
    "BASH_MAX_TIMEOUT_MS",
    "MCP_TIMEOUT",
    "MCP_TOOL_TIMEOUT",
    "MAX_MCP_OUTPUT_TOKENS",
    "ENABLE_TOOL_SEARCH",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
    "DISABLE_AUTOUPDATER",
    "ANTHROPIC_BASE_URL",
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
)


def user_home(
    env: Mapping[str, str], user: str | None, paths: ImagePaths, sources: list[Source]
) -> str | None:
    """The image user's HOME: ENV HOME, else /etc/passwd; None when it cannot be told."""
    if env.get("HOME", "").startswith("/"):
        return posixpath.normpath(env["HOME"])
    user = (user or "").split(":")[0] or "root"
    opened = paths.open("/etc/passwd")
    if opened.state in ("failed", "unread"):
        return None  # (a failed source says why)
    passwd = opened.content
    if passwd is None:
        if user in ("root", "0"):
            return "/root"
        sources.append(
            Source.skipped(
                "image-agent",
                "/etc/passwd",
                f"no /etc/passwd in the image: the HOME of user {user!r} is unknown; "
                "user settings were looked for in /root and /home/*",
            )
        )
        return None
    for line in passwd.data.decode("utf-8", "replace").splitlines():
        parts = line.split(":")
        if len(parts) >= 7 and (parts[0] == user or parts[2] == user):
            return posixpath.normpath(parts[5]) if parts[5].startswith("/") else None
    return "/"  # the engine's HOME for a user /etc/passwd does not know


_MANAGED = (
    ("/etc/claude-code/managed-settings.json", "managed settings"),
    ("/etc/claude-code/managed-mcp.json", "managed MCP servers"),
)
_DROP_INS = "/etc/claude-code/managed-settings.d"


def config_files(
    env: Mapping[str, str], home: str | None, paths: ImagePaths
) -> list[tuple[FileContent, str]]:
    """Managed settings and MCP servers, the user's settings and ``.claude.json``; with the
    HOME unknown, those of every home in the image (never one picked). Every path is opened
    through the image's links, as the agent would open it."""
    out: list[tuple[FileContent, str]] = []
    for path, why in _MANAGED:
        opened = paths.open(path)
        if opened.content is not None:
            out.append(paths.present(opened, why))
    _res, folder = paths.folder(_DROP_INS, "/*")
    if folder is not None:
        for c in sorted(paths.by_path.values(), key=lambda c: c.path):
            base = posixpath.basename(c.path)
            if posixpath.dirname(c.path) != folder or not base.endswith(".json"):
                continue
            if not base.startswith("."):
                opened = paths.open(f"{_DROP_INS}/{base}")
                if opened.content is not None:
                    out.append(paths.present(opened, "managed settings"))
    config_dir = env.get("CLAUDE_CONFIG_DIR", "")
    codex_home = env.get("CODEX_HOME", "")
    homes = [home] if home is not None else sorted({h for p in paths.by_path if (h := _home_of(p))})
    for h in homes:
        base = posixpath.normpath(config_dir) if config_dir.startswith("/") else f"{h}/.claude"
        codex = posixpath.normpath(codex_home) if codex_home.startswith("/") else f"{h}/.codex"
        for path, why in (
            (f"{base}/settings.json", "user settings"),
            (
                f"{h}/.claude.json" if not config_dir else f"{base}/.claude.json",
                "user MCP configuration",
            ),
            (f"{codex}/config.toml", "user Codex CLI config"),
            (f"{h}/.gemini/settings.json", "user Gemini CLI settings"),
        ):
            opened = paths.open(posixpath.normpath(path))
            if opened.content is not None:
                out.append(paths.present(opened, why))
    return out


_USER_FILES: tuple[str, ...] = (
    "/.claude.json",
    "/.claude/settings.json",
    "/.codex/config.toml",
    "/.gemini/settings.json",
)


def _home_of(path: str) -> str | None:
    """The home folder (/root or /home/NAME) a user config file is in, if it is in one."""
    if not path.startswith(("/root/", "/home/")):
        return None
    for suffix in _USER_FILES:
        if path.endswith(suffix):
            home = path[: -len(suffix)]
            return home if home == "/root" or home.count("/") == 2 else None
    return None


def agent_clis(
    by_path: Mapping[str, FileContent], entries: Mapping[str, FileEntry]
) -> list[JSONValue]:
    """Agent CLIs installed with npm (their package.json) and their launchers."""
    out: list[JSONValue] = []
    for c in sorted(by_path.values(), key=lambda c: c.path):
        if not c.path.endswith("/package.json"):
            continue
        package = next((p for p in CLI_PACKAGES if c.path.endswith(f"/{p}/package.json")), None)
        if package is None:
            continue
        try:
            doc = json.loads(c.data)
            version = str(doc.get("version")) if isinstance(doc, dict) else None
        except ValueError:
            version = None
        out.append(
            {
                "command": CLI_PACKAGES[package],
                "package": package,
                "version": version,
                "path": c.path.rsplit("/", 1)[0],
                # <prefix>/lib/node_modules (npm -g) or yarn's global folder, not a
                # project's own dependency
                "global": "/lib/node_modules/" in c.path or "/global/node_modules/" in c.path,
                "layer": c.layer_digest,
                "launchers": [
                    e.path for e in entries.values() if e.path.endswith("/" + CLI_PACKAGES[package])
                ],
            }
        )
    return out


def claude_env(env: Mapping[str, str]) -> list[JSONValue]:
    """The Claude Code variables set, values redacted when they look like secrets."""
    from agentguard.redact import mask_value
    from agentguard.secret_text import classify

    out: list[JSONValue] = []
    for name in CLAUDE_ENV:
        if name in env:
            value = env[name]
            shown = mask_value() if classify(name, value) is not None else value
            out.append({"name": name, "value": shown})
    return out
