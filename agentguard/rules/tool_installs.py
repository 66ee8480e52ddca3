"""AG130: an agent CLI or an installer script taken unpinned (npm -g, npx, curl | sh)."""

from __future__ import annotations

from collections.abc import Iterable

from agentguard.facts.installs import ToolInstall
from agentguard.findings import Finding, Fix, Location, Severity
from agentguard.rules.base import Rule, register


@register
class UnpinnedToolInstall(Rule):
    """An agent CLI or an installer script is installed at whatever version is current.

    ## What it does
    Finds, in Dockerfile `RUN` lines, compose `command`/`entrypoint`, devcontainer
    lifecycle commands and the `run:` steps of a composite action that runs an agent: a global npm install (`npm install -g`, `pnpm add -g`, `yarn
    global add`, `bun add -g`) or an `npx` run of an agent CLI (`@anthropic-ai/claude-code`,
    `@openai/codex`, `@google/gemini-cli`, ...) without an exact version or with
    `@latest`, and a remote script run as it is downloaded, whose URL names no release:
    piped into a shell or an interpreter that runs its input (`curl ... | sh`, `| python -`,
    as Poetry's installer is taken), or run from a substitution (`sh -c "$(curl ...)"`,
    `bash <(curl ...)`, `eval "$(curl ...)"`), or saved by `ADD <url> <file>` (without
    `--checksum`) and run by a later `RUN` of the same stage (`ADD https://installer.example/rustup.sh
    /tmp/rustup.sh` then `RUN /tmp/rustup.sh -y`: a piped installer in two steps). A download
    piped into a program that parses it (`| python3 -c "import json ..."`) is not a script.

    ## Why is this bad?
    Each build (or container start) takes the newest release: the agent's defaults for
    tools and permissions change without a change in your repository, and a compromised
    release or installer reaches the image the next time it is built.

    ## Example
    ```dockerfile
    RUN npm install -g @anthropic-ai/claude-code@latest
    RUN curl -fsSL https://example.invalid/install.sh | bash
    ```

    ## Use instead
    Pin the exact version you tested, and fetch installers of a named release (or the
    package itself, checked against a hash):
    ```dockerfile
    RUN npm install -g @anthropic-ai/claude-code@2.0.14
    ```
    """

    id = "AG130"
    name = "unpinned-tool-install"
    title = "Agent CLI or installer script installed unpinned"
    default_severity = Severity.MEDIUM
    family = "tool_installs"


_WHAT = {
    "npm-global": "installs the agent CLI {what} globally",
    "npx": "runs the agent CLI {what} through npx",
    "remote-script": "runs the remote script {what}",
}
_FIX = {
    "npm-global": "Pin the exact version you tested: `npm install -g {name}@<version>`.",
    "npx": "Pin the exact version you tested: `npx {name}@<version>`.",
    "remote-script": "Fetch the installer of a named release (or the release itself, checked "
    "against its published hash) instead of whatever the URL serves today.",
}


def check_tool_installs(installs: Iterable[ToolInstall]) -> list[Finding]:
    out: list[Finding] = []
    for t in installs:
        name = t.what.rsplit("@", 1)[0] if t.what.count("@") > t.what.startswith("@") else t.what
        when = {"build": "at build time", "ci": "on every CI run"}.get(
            t.phase, "at every container start"
        )
        out.append(
            UnpinnedToolInstall.finding(
                f"`{t.path}` {_WHAT[t.kind].format(what=t.what)} {when} ({t.reason}): what "
                "runs is whatever is current then.",
                locations=[Location(path=t.path, line=t.line)],
                fix=Fix(
                    "Verify the download: `ADD --checksum=sha256:<digest of the installer you "
                    "reviewed> <url> <file>`, or fetch the installer of a named release."
                    if "downloaded by ADD" in t.reason
                    else _FIX[t.kind].format(name=name)
                ),
                evidence={"kind": t.kind, "what": t.what, "reason": t.reason, "phase": t.phase},
            )
        )
    return out
