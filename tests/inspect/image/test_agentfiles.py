"""Following an image's command line through the files one pass collected (no engine needed)."""

from __future__ import annotations

from pathlib import Path

from agentguard.findings import Source
from agentguard.inspect.facts import FileContent, FileEntry, ImageConfig, ImageFacts
from agentguard.inspect.image.agentfiles import find_agent
from tests.inspect.engine_support import inspect_cli, report_of
from tests.inspect.oci_writer import Platform, write_layout

LAYER = "sha256:" + "cd" * 32


def image(
    config: ImageConfig, files: dict[str, bytes], links: dict[str, str] | None = None
) -> ImageFacts:
    entries = [FileEntry(path, 0, LAYER, "file", len(data), 0o755) for path, data in files.items()]
    entries += [
        FileEntry(path, 0, LAYER, "symlink", 0, 0o777, target)
        for path, target in (links or {}).items()
    ]
    return ImageFacts(
        target="img",
        image_id=None,
        repo_digests=(),
        config=config,
        layers=(),
        workdir_entries=(),
        workdir_entries_truncated=False,
        contents=tuple(FileContent(p, LAYER, d) for p, d in sorted(files.items())),
        installed=(),
        agent_entries=tuple(entries),
    )


def test_an_entrypoint_script_that_execs_its_arguments_runs_the_cmd() -> None:
    facts = image(
        ImageConfig(
            user="",
            workdir="/app",
            entrypoint=("docker-entrypoint.sh",),
            cmd=("python", "/opt/a/bot.py"),
            env=(("PATH", "/usr/local/bin:/usr/bin"),),
        ),
        {
            "/usr/local/bin/docker-entrypoint.sh": b'#!/bin/sh\nset -e\nexec gosu app "$@"\n',
            "/opt/a/bot.py": b"import claude_agent_sdk\n",
        },
    )
    agent = find_agent(facts)
    assert [(f.content.path, f.why) for f in agent.files] == [
        ("/opt/a/bot.py", "agent script started by /usr/local/bin/docker-entrypoint.sh"),
        (
            "/usr/local/bin/docker-entrypoint.sh",
            "shell wrapper started by the image's ENTRYPOINT/CMD",
        ),
    ]
    assert agent.sources[:2] == (
        Source.ok(
            "image-agent",
            "docker-entrypoint.sh python /opt/a/bot.py",
            "followed to shell wrapper /usr/local/bin/docker-entrypoint.sh",
        ),
        Source.ok("image-agent", "python /opt/a/bot.py", "followed to script /opt/a/bot.py"),
    )


def test_what_cannot_be_followed_is_skipped_with_the_reason() -> None:
    missing = image(ImageConfig(user="", workdir="", cmd=("python3", "/srv/bot.py")), {})
    assert find_agent(missing).sources == (
        Source.skipped(
            "image-agent",
            "python3 /srv/bot.py",
            "/srv/bot.py is not in the image: nothing to follow",
        ),
    )
    inline = image(ImageConfig(user="", workdir="", cmd=("python3", "-c", "import x")), {})
    assert find_agent(inline).sources == (
        Source.skipped(
            "image-agent",
            "python3 -c 'import x'",
            "python -c code in the command line: not analysed",
        ),
    )
    nothing = image(ImageConfig(user="", workdir=""), {})
    assert find_agent(nothing).sources == (
        Source.skipped("image-agent", "img", "the image config sets no ENTRYPOINT or CMD"),
    )
    codex = image(
        ImageConfig(user="", workdir="", entrypoint=("codex", "exec")),
        {},
        links={"/usr/local/bin/codex": "../lib/node_modules/@openai/codex/bin/codex.js"},
    )
    assert find_agent(codex).sources == (
        Source.skipped(
            "image-agent",
            "codex exec",
            "the codex CLI: its command-line flags are not read from the image config (its "
            "user config in the image is)",
        ),
    )


def test_an_unknown_home_looks_at_every_home_and_says_so() -> None:
    facts = image(
        ImageConfig(user="1000", workdir="", cmd=("sleep", "1")),
        {
            "/home/a/.claude.json": b"{}",
            "/home/b/.claude/settings.json": b"{}",
            "/usr/bin/sleep": b"\x7fELF....",
        },
    )
    agent = find_agent(facts)
    assert [(f.content.path, f.why) for f in agent.files] == [
        ("/home/a/.claude.json", "user MCP configuration"),
        ("/home/b/.claude/settings.json", "user settings"),
    ]
    assert agent.facts["home"] is None
    assert agent.sources[-1] == Source.skipped(
        "image-agent",
        "/etc/passwd",
        "no /etc/passwd in the image: the HOME of user '1000' is unknown; user settings were "
        "looked for in /root and /home/*",
    )


def test_managed_drop_ins_and_managed_mcp_feed_the_rules(tmp_path: Path) -> None:
    """An OCI layout (no engine): drop-in managed settings and managed MCP servers are read
    as managed configuration, a drop-in removed by a later layer is not."""
    layout = write_layout(
        tmp_path / "layout",
        [
            Platform(
                "linux",
                "amd64",
                [
                    (
                        {
                            "etc/claude-code/managed-settings.d/10-team.json": (
                                '{"permissions": {"defaultMode": "bypassPermissions"}}'
                            ),
                            "etc/claude-code/managed-settings.d/20-gone.json": (
                                '{"permissions": {"allow": ["Bash"]}}'
                            ),
                            "etc/claude-code/managed-mcp.json": (
                                '{"mcpServers": {"gh": {"command": "npx", "args": ["-y", "gh"]}}}'
                            ),
                        },
                        "gzip",
                    ),
                    ({"etc/claude-code/managed-settings.d/.wh.20-gone.json": ""}, "none"),
                ],
                config={"Cmd": ["sleep", "1"], "WorkingDir": "/work"},
            )
        ],
    )
    report = report_of(inspect_cli(layout, "--format", "json"))
    got = sorted(
        (f["rule_id"], f["locations"][0]["path"], f["message"].split(":")[0])
        for f in report["findings"]
        if f["rule_id"].startswith("AG3")
    )
    assert got == [
        (
            "AG305",
            "/etc/claude-code/managed-settings.d/10-team.json",
            'managed settings set "defaultMode"',
        ),
        (
            "AG310",
            "/etc/claude-code/managed-mcp.json",
            "MCP server 'gh' (managed-mcp.json) launches gh",
        ),
    ]
    assert [f["path"] for f in report["facts"]["image"]["agent"]["files"]] == [
        "/etc/claude-code/managed-mcp.json",
        "/etc/claude-code/managed-settings.d/10-team.json",
    ]
    assert [s["reason"] for s in report["sources"] if s["kind"] == "image-agent"] == [
        "sleep is not in the image's PATH: nothing to follow"
    ]


def test_a_wrapper_target_the_pass_did_not_read_is_not_called_absent() -> None:
    facts = image(
        ImageConfig(user="", workdir="", entrypoint=("/start",)),
        {"/start": b"#!/bin/sh\nexec python3 /usr/lib/agent/run.py\n"},
    )
    assert find_agent(facts).sources[-1] == Source.skipped(
        "image-agent",
        "python3 /usr/lib/agent/run.py",
        "/usr/lib/agent/run.py was not collected in the one pass: a wrapper names it, and it "
        "is in a system folder the pass does not read for a wrapper's targets",
    )


CLI_PKG = "/usr/local/lib/node_modules/@anthropic-ai/claude-code/package.json"


def test_an_installed_claude_cli_without_settings_is_checked_with_its_defaults() -> None:
    files = {CLI_PKG: b'{"name": "@anthropic-ai/claude-code", "version": "2.0.1"}'}
    config = ImageConfig(user="", workdir="", cmd=("sleep", "1"))
    agent = find_agent(image(config, files))
    assert [(c.engine, c.path, c.options, c.ambiguous) for c in agent.configs] == [
        ("claude CLI", CLI_PKG, {}, True)
    ]
    assert agent.facts["agent_clis"] == [
        {
            "command": "claude",
            "package": "@anthropic-ai/claude-code",
            "version": "2.0.1",
            "path": CLI_PKG.rsplit("/", 1)[0],
            "global": True,
            "layer": LAYER,
            "launchers": [],
        }
    ]
    configured = {**files, "/root/.claude/settings.json": b'{"permissions": {"deny": ["Bash"]}}'}
    assert find_agent(image(config, configured)).configs == ()
    local = {CLI_PKG.replace("/usr/local/lib/", "/app/"): files[CLI_PKG]}
    assert find_agent(image(config, local)).configs == ()


def test_link_loops_and_wrappers_that_exec_themselves_end_with_a_reason() -> None:
    looped = image(
        ImageConfig(user="", workdir="", entrypoint=("/start",)), {}, links={"/start": "/start"}
    )
    assert find_agent(looped).sources[0] == Source.skipped(
        "image-agent",
        "/start",
        "/start is a symlink whose content was not collected (a link target outside the "
        "folders read, or over a cap)",
    )
    itself = image(
        ImageConfig(user="", workdir="", entrypoint=("/start",)),
        {"/start": b"#!/bin/sh\nexec /start\n"},
    )
    sources = find_agent(itself).sources
    assert len(sources) == 6
    assert sources[-1] == Source.skipped(
        "image-agent", "/start", "more than 4 wrappers deep: not followed"
    )
