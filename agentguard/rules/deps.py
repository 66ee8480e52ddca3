"""AG1xx: dependency rules over a resolved lock graph (facts only, no I/O)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentguard.facts.graph import LockGraph
from agentguard.findings import Confidence, Finding, Location, Severity
from agentguard.rules.base import Rule, register

if TYPE_CHECKING:
    pass


@register
class MajorSpanningRange(Rule):
    """A declared dependency range admits more than one released major of the child.

    ## What it does
    For every edge *parent -> child* in the resolved tree, compares the specifier the
    parent declares (from its own `Requires-Dist`) with the child's released versions,
    and reports the edge when versions from two or more majors satisfy it (before 1.0
    each minor counts as a major). The finding carries the whole path from the project,
    the specifier, the majors admitted and the version locked; a child pinned once per
    fork of a universal lock gets one finding per pin the edge reaches, its marker beside
    it and kept in the cap (a cap for a package that exists only under a marker keeps
    the marker, or the lock stops installing elsewhere).

    ## Why is this bad?
    Whether your build gets the old or the new major depends on the day it runs. An
    agent SDK that declares `mcp>=1.23.0` imports fine with mcp 2.x and then fails at
    start (`'Server' object has no attribute 'list_tools'`); an exception handler that
    falls back to another model turns that into a quietly worse bot. Pinning only the
    SDK does not help: the protocol library is decided one hop away.

    ## Example
    ```toml
    [project]
    dependencies = ["claude-agent-sdk==0.2.95"]   # declares mcp>=1.23.0; mcp 2.x is out
    ```

    ## Use instead
    Cap the child at the major you have tested, in your own requirements:
    ```toml
    dependencies = ["claude-agent-sdk==0.2.95", "mcp>=1.23.0,<2"]
    ```
    Which major the fix offers first follows the evidence of what the parent was built
    and tested against:

    1. when later releases of the same parent declare a tighter bound for the child
       (claude-agent-sdk 0.2.100 and later: `mcp<2.0.0`), that is the upstream's own
       word that the new major broke it: the fix offers that cap first and cites them;
    2. else the index's upload times: a parent release cannot have been tested against
       a major that shipped after it. mcp-agent 0.2.6 (uploaded 2025-12-05) declares
       `mcp>=1.20.0`; mcp 2.0.0 shipped 2026-07-28: the fix offers `mcp>=1.20.0,<2`
       first, never the locked mcp 2. When the locked major shipped before the parent
       release, the locked major comes first;
    3. else (the project's own range, or upload times unknown) the locked major, and
       the fix says which evidence is missing.

    A fix that moves the lock off its locked major is a major crossing that the re-lock
    gate (AG102) stops, so it says so and names the whole command that lets it through:
    `agentguard lock --allow-major mcp`. When your own requirement already holds the
    child to one major, the edge is reported as mitigated (info), but only where that
    requirement's marker holds: `mcp>=2.0,<3 ; sys_platform == "win32"` mitigates
    nothing on Linux, and the finding stays, naming the environments left open.

    The first fixes are one set, since you add all of them: every span over one pin of
    a child gets the same cap (referencing 0.37.0 was built when rpds-py 0.27 was the
    newest major, jsonschema 4.26.0 when 0.30 was: both get `rpds-py>=0.27,<0.28`, the
    major neither was uploaded before, not two caps that exclude each other). `agentguard
    lock` then resolves all first fixes together with the real resolver, beside your own
    requirements, before offering them (evidence `fix_set`: `resolves`); when one
    child's caps cannot join the others, its finding names the caps it conflicts with
    and offers no snippet (`conflict`), never a set that does not install, nor the major
    the parent cannot have been built against. Offline (`--check`), `unknown`.
    """

    id = "AG101"
    name = "major-spanning-range"
    title = "Dependency range admits more than one released major"
    default_severity = Severity.HIGH
    family = "dependencies"


@register
class MajorCrossedOnRelock(Rule):
    """A re-lock would move a package to another major.

    ## What it does
    When a previous lock exists, compares every package's new pins with the locked ones,
    per environment: a universal lock pins a package once per fork (`jiter==0.18.0 ;
    python_full_version < "3.11"` beside `jiter==0.19.0 ; python_full_version >= "3.11"`),
    so an old and a new pin are compared wherever both markers select the same Python
    version and platform. A change of major (or of `0.minor` before 1.0) in any
    environment stops the lock: neither lock file is written, and the finding names old
    and new versions, the environment (`for python_full_version >= '3.11'`) and the edges
    that allowed it. A new fork that keeps every environment's major is no crossing.

    ## Why is this bad?
    Resolvers cross majors on upgrade without a word. A new major is a new API; it needs
    review, not a routine `--upgrade`.

    ## Example
    `agentguard lock --upgrade` where the lock holds `mcp==1.27.0` and the SDK's range
    now admits `mcp==2.3.0`.

    ## Use instead
    Review the new major, then re-run with `--allow-major mcp`; or cap the package in
    your requirements (`mcp<2`) to stay on the locked major. When the move is what your
    own requirement asks for (a cap added on AG101's advice leaves out the locked
    version), the fix says so and names `agentguard lock --allow-major mcp`.
    """

    id = "AG102"
    name = "major-crossed-on-relock"
    title = "Re-lock would cross a major"
    default_severity = Severity.HIGH
    family = "dependencies"


@register
class LockOutOfSync(Rule):
    """The lock files do not match the project's inputs (or each other).

    ## What it does
    `agentguard lock --check` hashes the project's declared dependencies and compares the
    hash with the one recorded in both lock files; it also checks that the requirements
    lock and `pylock.toml` pin the same packages. A lock resolved for one environment
    (`--backend pip-tools`: the Python that ran it) is reported when `requires-python`
    admits another Python: there it may miss a dependency. No lock at all is high for an
    application and medium for a package (a `pyproject.toml` with `[project]` and a
    `[build-system] build-backend`): its users resolve its ranges themselves, and where the
    tree deploys it (an image, a CI job) the install steps' own findings say so.

    ## Why is this bad?
    A lock that no longer matches its inputs is installed as if it were reviewed while
    the requirements say something else; the next build re-resolves silently.

    ## Example
    Adding `openai-agents` to `[project.dependencies]` without re-running `agentguard lock`.

    ## Use instead
    Run `agentguard lock` and commit both lock files.
    """

    id = "AG103"
    name = "lock-out-of-sync"
    title = "Lock files out of sync with the inputs"
    default_severity = Severity.HIGH
    family = "dependencies"


@register
class UnhashedPin(Rule):
    """A pin in the requirements lock carries no hash.

    ## What it does
    Reports every requirement line in the lock that has no `--hash`, or is not pinned
    with `==`; in a project's own lock (`uv.lock`, `poetry.lock`, `pylock.toml`), every
    downloaded package without a hash. A package pinned by a git commit is reported at
    medium, worded for the tool that installs from that lock (uv or Poetry check out the
    commit and build it; pip's `--require-hashes` refuses it).

    ## Why is this bad?
    `pip install --require-hashes` refuses such a file, and without hashes a re-uploaded
    or substituted file installs unnoticed. A git pin names a commit, but what gets
    installed is built from it at install time: there is no file hash to check.

    ## Example
    `mcp==1.27.0` with no `--hash=sha256:...` lines.

    ## Use instead
    Re-generate the lock with `agentguard lock`; do not edit it by hand.
    """

    id = "AG104"
    name = "unhashed-pin"
    title = "Pin without a hash"
    default_severity = Severity.HIGH
    family = "dependencies"


@register
class DependencyRangesUnknown(Rule):
    """A locked package is published only as an sdist: its declared ranges are unknown.

    ## What it does
    Reports a locked package that has no wheel on the index (so no core metadata agentguard
    can read without running anything): its declared ranges were not checked.

    ## Why is this bad?
    Its edges are unknown, not safe: a major-spanning range below it cannot be seen. And
    to resolve it at all, the resolver built the sdist, which runs the package's own build
    code on your machine (and again on every build that installs it).

    ## Example
    A package published only as an sdist.

    ## Use instead
    Prefer a version that ships a wheel, or resolve with `--only-binary` to refuse sdists.
    """

    id = "AG105"
    name = "dependency-ranges-unknown"
    title = "Declared ranges of a package unknown (no wheel metadata)"
    default_severity = Severity.MEDIUM
    family = "dependencies"


@register
class YoungRelease(Rule):
    """A locked release was uploaded less than seven days ago.

    ## What it does
    Compares the upload time the index gives for each locked release (its earliest file)
    with the time of the run, and names every release younger than seven days, whatever
    `min-release-age` is set to. A release whose upload time the index does not give is
    counted as unknown, never as old.

    ## Why is this bad?
    A new release is where a compromised upload lands first: a stolen token publishes a
    patch release, and every lock made that week picks it up. Most are found and yanked
    within days.

    ## Example
    `agentguard lock --upgrade` on the day `litellm 1.99.1` is published.

    ## Use instead
    Review the release before you deploy it, or let releases age first:
    ```toml
    [tool.agentguard]
    min-release-age = "7d"   # or: agentguard lock --min-release-age 7d
    ```
    """

    id = "AG106"
    name = "young-release"
    title = "Locked release younger than seven days"
    default_severity = Severity.MEDIUM
    family = "dependencies"


def check_unknown_metadata(graph: LockGraph) -> list[Finding]:
    return [
        DependencyRangesUnknown.finding(
            f"{name} is published only as an sdist: the resolver built it (running its build "
            "code) to learn its requirements; agentguard did not, so its edges were not checked.",
            locations=[Location(dependency_path=graph.path_to(name))],
            fix="Prefer a version that ships a wheel, or re-run with `--only-binary` (refuses "
            "sdists: no package code runs).",
            evidence={"package": name},
            confidence=Confidence.MEDIUM,
        )
        for name in sorted(graph.unknown_metadata)
    ]
