"""Which paths of an image are collected, and how a ``METADATA`` header block is read.

Pure functions on relative names (no leading slash): the layer scan calls them per entry.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from packaging.utils import canonicalize_name

MANAGED_SETTINGS = "etc/claude-code/managed-settings.json"

# Files whose content is collected anywhere below the working directory.
CONFIG_NAMES = frozenset({".mcp.json", "CLAUDE.md", "pyproject.toml", "package.json", "Dockerfile"})
CODE_SUFFIXES = (".py", ".ts", ".js", ".mjs")
# Vendored or generated folders: their files are not the project's own (still listed).
VENDORED = frozenset(
    {
        "node_modules",
        ".venv",
        "venv",
        "site-packages",
        "dist-packages",
        "__pycache__",
        ".git",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
    }
)
# With the working directory at "/", code and config are not looked for in system folders.
SYSTEM_TOPS = frozenset(
    {"usr", "lib", "lib32", "lib64", "libx32", "bin", "sbin", "etc", "var", "proc", "sys", "dev"}
    | {"run", "boot", "tmp", "opt/conda", "nix"}
)
KEY_SUFFIXES = (".pem", ".key", ".p12", ".pfx", ".kdbx")
KEY_NAMES = frozenset(
    {"id_rsa", "id_ed25519", "id_ecdsa", "id_dsa", ".npmrc", ".pypirc", ".netrc", ".git"}
    | {"credentials", "credentials.json", ".git-credentials", "secrets.json", ".htpasswd"}
)

CONFIG = "config"  # content collected
CODE = "code"  # content collected, count capped
ENV = "env"  # listed, never read (may hold secrets)
NOTABLE = "notable"  # listed first: documents, keys, repository metadata


class Scope:
    """The working directories a layer scan collects for (relative; "" is the root)."""

    def __init__(self, workdirs: Iterable[str]) -> None:
        self.workdirs = tuple(sorted(set(workdirs)))
        self.root = "" in self.workdirs
        self.exact = frozenset(w for w in self.workdirs if w)
        self.prefixes = tuple(w + "/" for w in self.workdirs if w)
        ancestors: set[str] = set()
        for w in self.exact:
            parts = w.split("/")
            ancestors.update("/".join(parts[:i]) for i in range(1, len(parts) + 1))
        self.ancestors = frozenset(ancestors)

    def covers(self, name: str) -> bool:
        return self.root or name in self.exact or name.startswith(self.prefixes)

    def relative(self, name: str) -> tuple[str, bool]:
        """``name`` relative to the deepest working directory holding it; True if that is "/"."""
        best = ""
        for w in self.exact:
            if (name == w or name.startswith(w + "/")) and len(w) > len(best):
                best = w
        return (name[len(best) + 1 :], False) if best else (name, True)


def purpose(rel: str, *, root: bool) -> str | None:
    """Why an entry at ``rel`` (relative to the working directory) matters, if it does."""
    slash = rel.rfind("/")
    base = rel[slash + 1 :]
    kind = kind_of_name(base, rel)
    if kind is None:
        return None
    folders = rel.split("/")[:-1]
    if kind in (CONFIG, CODE):
        if any(f in VENDORED for f in folders):
            return None
        if root and folders and (folders[0] in SYSTEM_TOPS or "/".join(folders[:2]) in SYSTEM_TOPS):
            return None
    return kind


def kind_of_name(base: str, rel: str) -> str | None:
    """What a file named ``base`` at ``rel`` is to the collection, by name alone."""
    if base in CONFIG_NAMES:
        return CONFIG
    if base.startswith("requirements") and base.endswith(".txt"):
        return CONFIG
    if base.startswith(("compose", "docker-compose")) and base.endswith((".yml", ".yaml")):
        return CONFIG
    if base.startswith("Dockerfile.") or base.endswith(".Dockerfile"):
        return CONFIG
    if base in ("settings.json", "settings.local.json") and rel[: -len(base)].endswith(".claude/"):
        return CONFIG
    if base == "devcontainer.json" and rel[: -len(base)].endswith(".devcontainer/"):
        return CONFIG
    if base == ".env" or base.startswith(".env."):
        return ENV
    if base.endswith(CODE_SUFFIXES):
        return CODE
    if base in KEY_NAMES or base.endswith(KEY_SUFFIXES) or base.endswith(".md"):
        return NOTABLE
    return None


def is_metadata(name: str) -> bool:
    """``<anything>/<dist>.dist-info/METADATA`` (any folder: site-, dist-packages or other)."""
    if not name.endswith(".dist-info/METADATA"):
        return False
    return name.count("/") >= 1


@dataclass(frozen=True)
class Metadata:
    name: str  # canonical
    version: str
    requires: tuple[str, ...]
    header: bytes  # the header block (the long description is not kept)


def parse_metadata(data: bytes, *, complete: bool) -> Metadata | str:
    """The header block of a core-metadata file, or a reason it could not be read.

    ``complete`` says whether ``data`` is the whole file; when it is not, the header block
    must end inside ``data`` (the description body after it is not needed).
    """
    end = _header_end(data)
    if end < 0:
        if not complete:
            return "the METADATA header block is larger than the max_file_bytes cap"
        end = len(data)
    header = data[:end]
    text = header.decode("utf-8", "replace")
    fields: list[tuple[str, str]] = []
    for line in text.splitlines():
        if line[:1] in (" ", "\t") and fields:
            key, value = fields[-1]
            fields[-1] = (key, value + "\n" + line.strip())
            continue
        key, sep, value = line.partition(":")
        if sep:
            fields.append((key.strip().lower(), value.strip()))
    names = [v for k, v in fields if k == "name"]
    versions = [v for k, v in fields if k == "version"]
    if len(names) != 1 or len(versions) != 1 or not names[0] or not versions[0]:
        return "the METADATA file has no single Name and Version"
    requires = tuple(v for k, v in fields if k == "requires-dist")
    return Metadata(str(canonicalize_name(names[0])), versions[0], requires, header)


def _header_end(data: bytes) -> int:
    found = [i for i in (data.find(b"\n\n"), data.find(b"\r\n\r\n")) if i >= 0]
    return min(found) if found else -1
