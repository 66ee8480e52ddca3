"""AG201 over image facts: what sits in the agent's working directory inside an image.

Path classification (what makes a folder a project: `.git`, documents, `.env`, keys,
manifests) lives here too, so the Dockerfile/.dockerignore rules can share it. The rule
class is :class:`agentguard.rules.mounts.ProjectInImageWorkdir`. Pure functions only.
"""

from __future__ import annotations

import posixpath

from agentguard.facts.image import FileEntry, ImageFacts
from agentguard.findings import Confidence, Finding, Fix, Location, Severity
from agentguard.rules.mounts import ProjectInImageWorkdir, effective_workdir
from agentguard.secret_text import redact_step

_DOC_SUFFIXES = (".md", ".markdown", ".rst", ".adoc", ".org", ".txt", ".docx", ".pdf", ".odt")
_MANIFESTS = frozenset(
    {
        "pyproject.toml",
        "setup.py",
        "setup.cfg",
        "requirements.txt",
        "package.json",
        "Cargo.toml",
        "go.mod",
        "Gemfile",
        "pom.xml",
        "build.gradle",
    }
)
_KEY_NAMES = frozenset(
    {
        "id_rsa",
        "id_dsa",
        "id_ecdsa",
        "id_ed25519",
        ".netrc",
        ".pypirc",
        ".npmrc",
        ".git-credentials",
        "credentials.json",
        "credentials",
        "secrets.json",
        "secrets.yaml",
        "secrets.yml",
    }
)
_KEY_SUFFIXES = (".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".ppk", ".asc", ".gpg")
# Folders that belong to installed software, not to a project (skipped below the workdir).
_INSTALLED_DIRS = frozenset(
    {"site-packages", "dist-packages", "node_modules", "__pycache__", ".venv", "venv"}
)
# With the working directory at "/", these top-level folders are the system, not a project.
_SYSTEM_TOP = frozenset(
    {"bin", "boot", "dev", "etc", "lib", "lib32", "lib64", "libx32", "proc", "run", "sbin"}
    | {"sys", "usr", "var", "tmp", "mnt", "media", "srv", "opt", "root", "home"}
)
_LISTED = 50  # paths listed per layer in the evidence


def classify_project_path(rel: str, kind: str) -> str | None:
    """What a path below the working directory says about a project, or None."""
    parts = rel.split("/")
    name = parts[-1]
    if ".git" in parts[:-1]:
        return None  # inside .git: the .git entry itself is reported
    if name == ".git":
        return "vcs"
    if kind not in ("file", "hardlink", "symlink"):
        return None
    lower = name.lower()
    if lower == ".env" or lower.startswith(".env.") or lower.endswith(".env"):
        return "env-file"
    if lower in _KEY_NAMES or lower.endswith(_KEY_SUFFIXES) or "service-account" in lower:
        return "key-file"
    if name in _MANIFESTS:
        return "manifest"
    if lower.endswith(_DOC_SUFFIXES) and lower not in ("requirements.txt", "license.txt"):
        return "document"
    return None


def _below(path: str, root: str) -> str | None:
    """``path`` relative to ``root`` when at or below it, else None."""
    if root == "/":
        return path.lstrip("/") or "."
    if path == root:
        return "."
    if path.startswith(root + "/"):
        return path[len(root) + 1 :]
    return None


def check_image_workdir(image: ImageFacts, workdir: str | None = None) -> list[Finding]:
    """AG201: project markers in the image's working directory, one finding per layer.

    ``workdir`` overrides the image's (a container's WorkingDir). A project is reported
    when the directory holds a `.git`, documents, an `.env` or key files; manifests are
    listed alongside. An unknown working directory gives nothing here: the reader's
    failed source already makes the report incomplete.
    """
    root = effective_workdir(workdir if workdir else "", image.config.workdir)
    if root is None:
        return []
    by_layer: dict[str, list[tuple[str, str, FileEntry]]] = {}
    for entry in image.workdir_entries:
        rel = _below(entry.path, root)
        if rel is None or rel == ".":
            continue
        parts = rel.split("/")
        if _INSTALLED_DIRS.intersection(parts) or (root == "/" and parts[0] in _SYSTEM_TOP):
            continue
        category = classify_project_path(rel, entry.kind)
        if category is not None:
            by_layer.setdefault(entry.layer_digest, []).append((category, rel, entry))
    findings: list[Finding] = []
    created = {layer.digest: layer for layer in image.layers}
    triggers = {"vcs", "document", "env-file", "key-file"}
    for digest, hits in sorted(by_layer.items(), key=lambda kv: kv[1][0][2].layer_index):
        categories = sorted({c for c, _, _ in hits})
        if not triggers.intersection(categories):
            continue
        hits.sort(key=lambda h: h[1])
        layer = created.get(digest)
        created_by = redact_step(layer.created_by) if layer and layer.created_by else None
        secret_files = [rel for c, rel, _ in hits if c in ("env-file", "key-file")]
        shown = ", ".join(rel for _, rel, _ in hits[:8]) + (", ..." if len(hits) > 8 else "")
        message = (
            f"The working directory {root} of image {image.target} holds a project "
            f"({', '.join(categories)}): {shown}; added by layer {hits[0][2].layer_index}"
            + (f" ({_short(created_by)})." if created_by else " (build step unknown).")
        )
        if secret_files:
            message += f" The agent can read {len(secret_files)} secret file(s)."
        if image.workdir_entries_truncated:
            message += " The listing of the working directory was capped; more may be there."
        findings.append(
            ProjectInImageWorkdir.finding(
                message,
                locations=[
                    Location(layer=digest, path=posixpath.join(root, rel)) for _, rel, _ in hits[:3]
                ],
                fix=Fix(
                    f"Copy only what the agent needs to run into the image (a built wheel or "
                    f"the package folder), keep {root} empty or a dedicated scratch folder, and "
                    "add a .dockerignore that keeps .git, docs, .env and keys out of the build "
                    "context.",
                    snippet=".git\n*.md\ndocs/\n.env*\n*.pem\n*.key\n",
                ),
                evidence={
                    "image": image.target,
                    "workdir": root,
                    "layer": digest,
                    "layer_index": hits[0][2].layer_index,
                    "created_by": created_by,
                    "categories": categories,
                    "paths": [posixpath.join(root, rel) for _, rel, _ in hits[:_LISTED]],
                    "paths_total": len(hits),
                    "listing_capped": image.workdir_entries_truncated,
                },
                severity=Severity.CRITICAL if secret_files else Severity.HIGH,
                confidence=Confidence.MEDIUM
                if image.workdir_entries_truncated
                else Confidence.HIGH,
            )
        )
    return findings


def _short(text: str, limit: int = 100) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
