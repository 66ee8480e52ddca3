"""Where a framework's local code executor runs when its own package's harness starts the
file in a container (agbench's ``run_cmd.py`` runs each template's ``scenario.py`` in a
Docker container). Facts only: the join is by the file's name, within one package (the
nearest folder with a ``pyproject.toml`` above both files); which template the harness
copies is decided by task files at run time, so the join says so.

What is credited is what the harness file shows: a container start, the one literal that
runs the script, no bind of the host's Docker socket. A socket in the container is no
boundary (its code starts another container with the host's files), and a script the
harness runs from more than one literal may also run outside the container: either keeps
the grade, and the message says where the code runs and why nothing is credited."""

from __future__ import annotations

from dataclasses import dataclass

from agentguard.facts.agents import ContainerHarness, ProjectFacts, ToolGrant


def package_root(path: str, roots: tuple[str, ...]) -> str | None:
    """The nearest folder at or above ``path``'s that holds a ``pyproject.toml``."""
    best: str | None = None
    for root in roots:
        if (root == "" or path.startswith(root + "/")) and (best is None or len(root) > len(best)):
            best = root
    return best


@dataclass(frozen=True)
class HarnessRun:
    harness: ContainerHarness
    script_lines: tuple[int, ...]  # the literals that run the grant's file
    root: str


def harness_runs(grant: ToolGrant, facts: ProjectFacts) -> list[HarnessRun]:
    """Every harness of the grant's package whose literals run the grant's file by name
    (all of them: two harnesses are two candidates, neither picked)."""
    root = package_root(grant.path, facts.package_roots)
    if root is None:
        return []
    name = grant.path.rpartition("/")[2]
    out: list[HarnessRun] = []
    for h in facts.harnesses:
        lines = tuple(line for script, line in h.scripts if script == name)
        if lines and h.path != grant.path and package_root(h.path, facts.package_roots) == root:
            out.append(HarnessRun(h, lines, root))
    return out


def credited(runs: list[HarnessRun]) -> bool:
    """One harness, one literal that runs the file, no Docker socket in its container."""
    return len(runs) == 1 and len(runs[0].script_lines) == 1 and runs[0].harness.socket_line is None


def harness_text(runs: list[HarnessRun], name: str) -> str:
    """Where the code runs, as the harness files show it, and why it is or is not credited
    (sentences, each ending with a full stop)."""
    parts: list[str] = []
    for run in runs:
        h = run.harness
        many = len(run.script_lines) > 1
        lines = " and ".join(str(n) for n in run.script_lines)
        text = (
            f" The harness of its package ({run.root or 'the root'}/) starts a container at "
            f"{h.path}:{h.line} and runs `{name}` from the literal{'s' if many else ''} at "
            f"line{'s' if many else ''} {lines} (joined by the file name: which template it "
            "copies is decided by task files at run time)."
        )
        if h.socket_line is not None:
            text += (
                " That container is no boundary: the harness binds the host's Docker socket "
                f"into it (line {h.socket_line}), so the code can start a container with the "
                "host's files."
            )
        if h.host_network_line is not None:
            text += f" The container has the host's network (line {h.host_network_line})."
        if many:
            text += f" Not every literal that runs `{name}` is shown to run inside it."
        parts.append(text)
    return "".join(parts)
