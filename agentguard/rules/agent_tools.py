"""AG3xx: what the agent engine can run -- built-in tools, permissions, MCP servers, models.

Rule classes and pure functions over :mod:`agentguard.facts.agents` facts.
The checks live in :mod:`agentguard.rules.agent_tools_checks`.
"""

from __future__ import annotations

from agentguard.facts.builtin_tools import TOOL_CATEGORIES
from agentguard.findings import Severity
from agentguard.rules.base import Rule, register


@register
class BuiltinShellTools(Rule):
    """The agent engine's built-in shell tools are live.

    ## What it does
    For every Claude agent configuration (Python `ClaudeAgentOptions`, TypeScript
    `query({ options })`, a `claude` command line) works out which built-in tools exist:
    all of them when `tools` is unset, the listed ones otherwise, minus
    `disallowed_tools`. Reports `Bash`, `BashOutput` and `KillShell` when they remain,
    naming them. Also reports shell-like tools handed over by other frameworks:
    openai-agents `ShellTool`/`LocalShellTool`/`ComputerTool`/`CodeInterpreterTool` and
    `SandboxAgent`'s default capabilities, LangChain `ShellTool` and Python REPL tools,
    smolagents `CodeAgent` with the local executor, AutoGen's local command-line
    executor, crewAI's unsafe code execution. A value that cannot be read statically is
    reported with low confidence, never taken as safe. A shell confined by the engine's
    sandbox (`sandbox={"enabled": True}`) is reported at medium severity, and so is one
    started inside GitHub Agentic Workflows' firewall container (`awf ... -- CMD` in a
    compiled `*.lock.yml`) when the file writes the network allow-list awf reads: the
    message names the domains, the working directory and `--env-all`, since a shell there
    still runs any command and can send what it reads to those domains; an awf whose
    allow-list the file does not show is said and not credited. A local executor in a
    script its own package's harness runs in a container (agbench's `run_cmd.py` starts a
    Docker container whose `run.sh` runs `python scenario.py`; the package is the nearest
    folder with a `pyproject.toml`) names that harness: it is medium (confidence medium,
    the join is by the file's name) only when the harness binds no Docker socket into the
    container and runs the script from one literal; otherwise it stays high and says why.
    In a workflow
    run (claude-code-action's `allowed_tools:`, `settings:` and `claude_args:` inputs, a
    `claude -p` step) nobody answers a prompt, so a shell whose pre-approved commands
    cannot start other code (`Bash(git diff:*)`, `Bash(ls:*)`) is medium; one that
    pre-approves an interpreter, a runner or a wildcard (`Bash(python:*)`, `Bash(make:*)`,
    `Bash(uv run:*)`, `Bash(npm run:*)`, `Bash(git:*)`, `Bash(find:*)`) runs arbitrary code
    and stays high, with the secrets the action's `claude_env` gives it named. Other engines:
    the Codex CLI's shell outside its sandbox (`sandbox_mode = "danger-full-access"` with an
    approval step still on), the Gemini CLI's `tools.allowed` listing the whole
    `run_shell_command`, and OpenHands on a runtime without a sandbox (`runtime = "local"`
    or `"cli"` in its `config.toml`) with confirmation mode on (medium: a person answers).

    ## Why is this bad?
    A shell reads every file the process can read, reaches the network and the Docker
    socket, and runs whatever a prompt injection asks for. `allowed_tools` only
    pre-approves tools; it does not remove any.

    ## Example
    ```python
    ClaudeAgentOptions(allowed_tools=["Read", "Grep"])   # Bash still exists
    ```

    ## Use instead
    ```python
    ClaudeAgentOptions(tools=["Read", "Grep"])            # only these exist
    ```
    or `disallowed_tools=["Bash", "BashOutput", "KillShell"]`.
    """

    id = "AG301"
    name = "builtin-shell-tools-live"
    title = "Built-in shell tools enabled"
    default_severity = Severity.HIGH
    family = "agent-tools"


@register
class BuiltinFileTools(Rule):
    """The agent engine's built-in file tools are live.

    ## What it does
    Same computation as AG301 for `Read`, `Write`, `Edit`, `MultiEdit`, `Glob`, `Grep`,
    `NotebookEdit` and `LS`; also openai-agents `ApplyPatchTool` and the sandbox
    `Filesystem` capability, and LangChain's `FileManagementToolkit` without `root_dir`.

    ## Why is this bad?
    `Read`, `Grep` and `Glob` need no permission inside the working directory: every
    document, plan and `.env` there is one call away from the model's context.

    ## Example
    ```python
    ClaudeAgentOptions(cwd=".")                           # tools unset: all file tools
    ```

    ## Use instead
    List the tools the agent needs (`tools=["Read"]`) and give it a working directory
    that holds only its own inputs.
    """

    id = "AG302"
    name = "builtin-file-tools-live"
    title = "Built-in file tools enabled"
    default_severity = Severity.MEDIUM
    family = "agent-tools"


@register
class BuiltinWebTools(Rule):
    """The agent engine's built-in web tools are live.

    ## What it does
    Same computation as AG301 for `WebFetch` and `WebSearch`; also openai-agents
    `WebSearchTool` and LangChain's requests tools.

    ## Why is this bad?
    A fetched page is untrusted input that the model reads as instructions, and a fetch
    of an attacker's URL carries whatever the model puts in it out of the container.

    ## Example
    ```typescript
    query({ prompt, options: { allowedTools: ["Read"] } })   // WebFetch still exists
    ```

    ## Use instead
    ```typescript
    query({ prompt, options: { tools: ["Read"] } })
    ```
    """

    id = "AG303"
    name = "builtin-web-tools-live"
    title = "Built-in web tools enabled"
    default_severity = Severity.MEDIUM
    family = "agent-tools"


@register
class AllowListWithoutRemoval(Rule):
    """An allow-list is given, but nothing is removed: the allow-list governs prompts only.

    ## What it does
    Reports a configuration that sets `allowed_tools` (`allowedTools`, `--allowedTools`)
    while `tools` is unset and `disallowed_tools` is empty, and a Claude Code settings
    file with `permissions.allow` entries and no `permissions.deny`.

    ## Why is this bad?
    "An allow-list of what is allowed without asking governs permissions, not what
    exists." Every other built-in tool is still live; users report `--allowedTools` not
    restricting tools while `--disallowedTools` does. In a workflow run nobody answers a
    prompt, so the others are denied (low), except those `--permission-mode acceptEdits`
    approves itself (the edit tools: medium).

    ## Example
    ```python
    ClaudeAgentOptions(allowed_tools=["Read", "Grep"])
    ```

    ## Use instead
    ```python
    ClaudeAgentOptions(tools=["Read", "Grep"], allowed_tools=["Read", "Grep"])
    ```
    In settings, add a `permissions.deny` list for what must never run.
    """

    id = "AG304"
    name = "allow-list-without-removal"
    title = "Allow-list without removal"
    default_severity = Severity.HIGH
    family = "agent-tools"


@register
class PermissionChecksBypassed(Rule):
    """Permission checks are bypassed.

    ## What it does
    Reports `permission_mode="bypassPermissions"`, `allowDangerouslySkipPermissions`,
    `--dangerously-skip-permissions`, `--permission-mode bypassPermissions` and
    `"defaultMode": "bypassPermissions"` in Claude Code settings. Severity rises to
    critical when the same project also runs the agent as root or mounts the project
    into it, or when the agent's working directory is the project. A managed settings
    file with `"disableBypassPermissionsMode": "disable"` lowers it (the mode is refused).
    Other engines: the Codex CLI with `danger-full-access` and no approval step
    (`approval_policy = "never"`, `codex exec`, `--dangerously-bypass-approvals-and-sandbox`,
    `openai/codex-action` with `sandbox: danger-full-access`), and the Gemini CLI in YOLO
    mode (`--yolo`, `--approval-mode yolo`, `run-gemini-cli`): high with its sandbox off,
    medium when the sandbox YOLO turns on by default confines it, low when `tools.core`
    limits the shell to listed commands; `security.disableYoloMode` refuses the mode; and
    OpenHands on the host (`[core] runtime = "local"` or `"cli"`) without
    `[security] confirmation_mode = true`.

    ## Why is this bad?
    Every tool call runs without a check: file writes, shell commands, fetches. Combined
    with root or a mounted checkout, one injected instruction changes the host's files.

    ## Example
    ```sh
    claude -p "fix the tests" --dangerously-skip-permissions
    ```

    ## Use instead
    Keep the default mode, list the tools the task needs with `tools=`/`--tools`, and
    pre-approve only those with `allowed_tools`.
    """

    id = "AG305"
    name = "permission-checks-bypassed"
    title = "Permission checks bypassed"
    default_severity = Severity.HIGH
    family = "agent-tools"


@register
class McpServerUnpinned(Rule):
    """An MCP server is launched from a package or image that is not pinned.

    ## What it does
    Reads MCP server definitions (`.mcp.json`, `mcp_servers=`/`mcpServers`,
    `MCPServerStdio`/`StdioServerParameters`, `claude_desktop_config.json`) and reports
    launchers that fetch code at start: `npx -y pkg` or `pkg@latest`, `uvx pkg` without
    `==`/`@version`, `pipx run pkg`, `docker run image` without a digest or with
    `latest`. The line is read as the launcher reads it (the parser the MCP server lock
    uses): only the launcher's options before the package count, options after it are the
    server's. Also reported, as not verifiably pinned: a launch with an option agentguard
    does not read (it cannot tell which argument is the package), a shell command
    (`npx -c`), a further package without an exact version (`uvx --with x`,
    `npx -p a -p b`), and a launch pointed at a registry, index or package cache the
    project chooses (`--registry`, `--index-url`, `--prefix`, the server's
    `npm_config_registry`/`UV_INDEX_URL`, the project's `.npmrc` `registry=` or `uv.toml`
    `index`). gh-aw's MCP gateway form (`"container": IMAGE` with `mounts`, `args`,
    `entrypoint`) is read as the `docker run` the gateway starts; when the same file also
    names that image by digest (a compiled workflow pulls each container so first) the
    finding is low and cites the digest: the gateway still runs the image by name, so
    whether the digest is what runs depends on how that pull tagged it.

    ## Why is this bad?
    The server runs with the agent's access and is re-downloaded on every start: a new
    release (or a hijacked one) becomes part of your agent without review. A registry the
    pull request names serves whatever it likes under a pinned version.

    ## Example
    ```json
    {"mcpServers": {"fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem"]}}}
    ```

    ## Use instead
    ```json
    {"mcpServers": {"fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem@2025.8.21"]}}}
    ```
    For images use `image@sha256:<digest>`; for uvx `pkg==1.2.3`. In a project,
    `agentguard lock --write-launch` resolves the version each npm and PyPI launch gets,
    records it in `mcp.lock.json` and writes it into the launch; once the lock holds a
    launch, this fix names its version (`npx -y @acme/tracker-mcp@1.4.2`,
    `uvx --from 'mcp-server-fetch==2025.4.7' mcp-server-fetch`).
    """

    id = "AG310"
    name = "mcp-server-unpinned"
    title = "MCP server launched unpinned"
    default_severity = Severity.HIGH
    family = "agent-tools"


@register
class SilentModelFallback(Rule):
    """Another model answers when the primary fails, and nothing says so.

    ## What it does
    Reports `fallback_model` (`fallbackModel`, `--fallback-model`), the fallbacks agent
    frameworks take as an option (agno's `fallback_models=`, LangChain's
    `.with_fallbacks(...)`, pydantic-ai's `FallbackModel`, LiteLLM's `fallbacks=`), and
    Python `except` handlers that switch to another model or construct another client
    without logging or re-raising.

    A library's tests of its own fallback class (pydantic-ai's `tests/` building the
    `FallbackModel` it ships) are the library testing itself, not a deployment's fallback:
    they are not reported, and one skipped `fallbacks` source names the class and says how
    many. The same call in the library's examples, or in another project's tests, is.

    ## Why is this bad?
    A start-up failure (an SDK whose protocol dependency crossed a major, a revoked key)
    turns into a quietly worse bot: answers keep coming, from a model nobody chose for
    this task, and no log says why.

    ## Example
    ```python
    try:
        reply = client.messages.create(model=PRIMARY, ...)
    except anthropic.APIError:
        reply = client.messages.create(model="claude-haiku-4-5", ...)
    ```

    ## Use instead
    Leave a witness: log which model answered and why the primary failed (or re-raise).
    ```python
    except anthropic.APIError as exc:
        log.warning("primary model failed (%s); answering with %s", exc, FALLBACK)
    ```
    """

    id = "AG320"
    name = "silent-model-fallback"
    title = "Silent model fallback"
    default_severity = Severity.MEDIUM
    family = "agent-tools"


CATEGORY_RULES: dict[str, tuple[type[Rule], tuple[str, ...]]] = {
    "shell": (BuiltinShellTools, TOOL_CATEGORIES["shell"]),
    "file": (BuiltinFileTools, TOOL_CATEGORIES["file"]),
    "web": (BuiltinWebTools, TOOL_CATEGORIES["web"]),
}
