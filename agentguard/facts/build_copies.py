"""What a Dockerfile's COPY takes from the build context into the image: the files and
folders of the project's tree (by category: docs, plans, .env, keys) that the
.dockerignore lets through. A join of facts, shared by the capability model (what is in an
agent's working directory) and AG212; no judgement, no I/O."""

from __future__ import annotations

import posixpath

from agentguard.facts.project import ENV_TEMPLATE, DockerIgnore, TreeFacts


def under(path: str, folder: str) -> str | None:
    """``path`` relative to ``folder`` ("." = the root), or None when not below it."""
    if folder in (".", ""):
        return path
    prefix = folder.rstrip("/") + "/"
    return path[len(prefix) :] if path.startswith(prefix) else None


def copied_files(
    tree: TreeFacts, ignore: DockerIgnore | None, context: str, source: str
) -> dict[str, list[str]]:
    """Per category, the files and folders of the tree that COPY ``source`` (relative to the
    build context ``context``) takes into the image, the .dockerignore applied."""
    base = posixpath.normpath(posixpath.join(context, source.lstrip("/")))
    out: dict[str, list[str]] = {}
    real_env_dirs: set[str] = set()
    template_dirs: list[str] = []
    for path, category in tree.keep_out:
        if under(path, base) in (None, "", "/"):
            continue
        if category == ENV_TEMPLATE:
            template_dirs.append(posixpath.dirname(path))
            continue
        in_context = under(path, context) or path
        if ignore is not None and ignore.excluded(in_context.rstrip("/")):
            continue
        out.setdefault(category, []).append(path)
        if category == ".env":
            real_env_dirs.add(posixpath.dirname(path))
    for folder in dict.fromkeys(template_dirs):
        covered = any(under(folder or ".", g or ".") is not None for g in tree.env_expected)
        env = posixpath.join(folder, ".env") if folder else ".env"
        if not covered or folder in real_env_dirs:
            continue
        if ignore is None or not ignore.excluded(under(env, context) or env):
            out.setdefault(".env", []).append(
                f"{env} (not in the checkout; .gitignore lists .env, so a local one is copied)"
            )
    return out
