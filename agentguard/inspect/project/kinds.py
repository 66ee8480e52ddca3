"""Which container/build files the project scan hands to :mod:`.containers`, by name.

Kept apart from the parsers so that walking a folder does not import them.
"""

from __future__ import annotations

import posixpath
import re

from agentguard.facts.project import ENV_TEMPLATE as ENV_TEMPLATE
from agentguard.facts.project import KEEP_OUT_DIRS as KEEP_OUT_DIRS
from agentguard.facts.project import TreeFacts as TreeFacts

_COMPOSE = re.compile(r"^(docker-)?compose(\.[\w.-]+)?\.ya?ml$", re.IGNORECASE)
_NOT_DOCKERFILE = (".py", ".md", ".txt", ".json", ".yml", ".yaml", ".sh", ".js", ".ts", ".toml")
_REQUIREMENTS = re.compile(r"^(.*requirements.*\.(txt|in|lock)|constraints.*\.txt)$", re.IGNORECASE)


def file_kind(path: str) -> str | None:
    """What this module reads ``path`` as, or None when it does not read it."""
    norm = path.replace("\\", "/")
    return kind_of(posixpath.basename(norm), norm)


def kind_of(base: str, norm: str) -> str | None:
    """:func:`file_kind` of ``norm`` (a path with ``/`` only) whose last name is ``base``
    (the walk knows both: no path is split again for each of its files)."""
    low = base.lower()
    if low.endswith(".dockerignore"):
        return "dockerignore"
    if (
        low in ("dockerfile", "containerfile")
        or low.startswith("dockerfile.")
        or low.endswith(".dockerfile")
    ):
        return "dockerfile"
    if _COMPOSE.match(base):
        return "compose"
    if low == ".devcontainer.json" or (
        low == "devcontainer.json" and "/.devcontainer/" in f"/{norm}"
    ):
        return "devcontainer"
    if low.endswith(".sh") and "/.devcontainer/" in f"/{norm}":
        return "devcontainer-script"  # what a lifecycle command may run (devcontainer_scripts)
    if low == "pyproject.toml":
        return "pyproject"
    if low == ".gitignore":
        return "gitignore"  # whether a fresh clone has a lock the build copies (uv sync)
    if low in ("uv.lock", "poetry.lock", "pylock.toml"):
        return "lock"  # a project's own lock: what it holds mitigates AG121
    if _REQUIREMENTS.match(base) or (
        "/requirements/" in f"/{norm}" and low.endswith((".txt", ".in"))
    ):
        return "requirements"
    return None


def wants_file(path: str) -> bool:
    """True for the files :func:`scan_container_files` reads (hidden ones included)."""
    return file_kind(path) is not None


# -- files that must not reach an image by a whole-folder COPY (AG212) -----------------

_ENV_TEMPLATES = (".example", ".sample", ".template", ".dist", ".tmpl", ".defaults")
_KEY_SUFFIXES = (".pem", ".key", ".p12", ".pfx", ".jks", ".keystore")
_KEY_PREFIXES = ("id_rsa", "id_ed25519", "id_ecdsa", "id_dsa")
_CREDENTIAL_FILES = frozenset({".npmrc", ".pypirc", ".netrc", ".git-credentials"})
_PLAN_FILES = frozenset({"PLAN.md", "PLANS.md", "TODO.md", "NOTES.md"})


def keep_out_category(name: str) -> str | None:
    """The AG212 category of a file name (.env, keys, plans), or None. Cheap: called on
    every non-Python file of the walk."""
    if name.startswith(".env"):
        if name == ".env" or (name[4] in ".-_" and not name.endswith(_ENV_TEMPLATES)):
            return ".env"
        # a template says users create the real one beside it (not in the checkout)
        return ENV_TEMPLATE if name[4:5] in (".", "-", "_") else None
    if name.endswith(_KEY_SUFFIXES) or (
        name.startswith(_KEY_PREFIXES) and not name.endswith(".pub")
    ):
        return "keys"
    if name in _CREDENTIAL_FILES:
        return "keys"
    if name in _PLAN_FILES:
        return "plans"
    return None


_ENV_LINE = re.compile(r"^(?:/|\*\*/)?(?:\.env(?:\*|\..*)?|\*\.env)$")


def gitignore_lists_env(text: str) -> bool:
    return any(_ENV_LINE.match(line.strip()) for line in text.splitlines())
