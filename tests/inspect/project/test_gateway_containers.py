"""gh-aw's MCP gateway form, ``{"container": IMAGE, "mounts": [...], "entrypoint": ...}``,
in the here-document a compiled workflow pipes to the gateway (modelled on
pydantic/pydantic-ai's ``.github/workflows/*.lock.yml``, which were read as servers with no
command: AG310 stayed silent on them). The gateway runs the image by name; the same file
pulls it by digest in an earlier step, which AG310 names, at low."""

from __future__ import annotations

from agentguard.findings import Severity
from agentguard.inspect.project.files import process_file
from agentguard.inspect.project.mcp_mapping import mcp_server_from_mapping
from agentguard.inspect.project.model import Unknown
from agentguard.rules.agent_tools_mcp import check_mcp_server

DIGEST = "a8082161d7dceda14b68f32eb39d0eaa96b825d07f5895b096afab9d9e0c7748"
PULL = (
    "      - name: Download container images\n"
    f'        run: bash "${{RUNNER_TEMP}}/gh-aw/actions/download_docker_images.sh" '
    f"ghcr.io/github/gh-aw-node@sha256:{DIGEST}\n"
)
GATEWAY = """\
      - name: Start MCP Gateway
        run: |
          cat << GH_AW_MCP_CONFIG_EOF | node start_mcp_gateway.cjs
          {
            "mcpServers": {
              "safeoutputs": {
                "container": "ghcr.io/github/gh-aw-node",
                "mounts": ["\\${GITHUB_WORKSPACE}:\\${GITHUB_WORKSPACE}:rw", "/tmp/gh-aw:/tmp/gh-aw:rw"],
                "args": ["-w", "\\${GITHUB_WORKSPACE}"],
                "entrypoint": "sh",
                "entrypointArgs": ["-c", "sh start_safe_outputs_mcp.sh"],
                "env": {"GITHUB_TOKEN": "\\${GITHUB_TOKEN}"}
              }
            },
            "gateway": {"port": $MCP_GATEWAY_PORT}
          }
          GH_AW_MCP_CONFIG_EOF
"""


def _workflow(*steps: str) -> str:
    head = "name: agent\non: issues\njobs:\n  agent:\n    runs-on: ubuntu-latest\n    steps:\n"
    return head + "".join(steps)


def _servers(text: str) -> list:  # type: ignore[type-arg]
    out = process_file(".github/workflows/triage.lock.yml", "script", text.encode())
    assert [s for s in out.sources if s.status.value == "failed"] == []
    return out.mcp_servers


def test_a_gateway_container_is_the_docker_run_the_gateway_starts() -> None:
    (server,) = _servers(_workflow(GATEWAY))
    assert server.name == "safeoutputs"
    assert server.transport == "stdio"
    assert server.command == "docker"
    assert server.image == "ghcr.io/github/gh-aw-node"
    # (what the gateway expands, `${GITHUB_WORKSPACE}`, is not known when it is read)
    assert tuple("?" if isinstance(a, Unknown) else a for a in server.args) == (
        "run", "-i", "--rm",
        "-v", "?",
        "-v", "/tmp/gh-aw:/tmp/gh-aw:rw",
        "--entrypoint", "sh",
        "-w", "?",
        "ghcr.io/github/gh-aw-node",
        "-c", "sh start_safe_outputs_mcp.sh",
    )  # fmt: skip
    assert server.declared_in.endswith("(a container the gateway runs)")
    assert server.pulled_digests == ()


def test_an_unpinned_gateway_container_is_high_when_nothing_names_its_digest() -> None:
    (server,) = _servers(_workflow(GATEWAY))
    (finding,) = check_mcp_server(server)
    assert finding.rule_id == "AG310"
    assert finding.severity is Severity.HIGH
    assert "ghcr.io/github/gh-aw-node" in finding.message


def test_a_digest_the_same_file_pulls_makes_it_low_and_is_named() -> None:
    (server,) = _servers(_workflow(PULL, GATEWAY))
    ref = f"ghcr.io/github/gh-aw-node@sha256:{DIGEST}"
    assert server.pulled_digests == ((ref, 8),)
    (finding,) = check_mcp_server(server)
    assert finding.severity is Severity.LOW
    assert ref in finding.message and "line 8" in finding.message
    assert "runs it by name" in finding.message
    assert ref in finding.fix.description


def test_a_digest_of_another_image_or_a_longer_name_is_not_credited() -> None:
    other = PULL.replace("gh-aw-node@", "gh-aw-node-extra@").replace(
        'download_docker_images.sh" ',
        'download_docker_images.sh" ghcr.io/github/other@sha256:' + DIGEST + " ",
    )
    (server,) = _servers(_workflow(other, GATEWAY))
    assert server.pulled_digests == ()
    (finding,) = check_mcp_server(server)
    assert finding.severity is Severity.HIGH


def test_a_tagged_gateway_container_is_credited_by_a_digest_of_that_repository() -> None:
    tagged = GATEWAY.replace('"ghcr.io/github/gh-aw-node"', '"ghcr.io/github/gh-aw-node:v1"')
    pull = PULL.replace("gh-aw-node@", "gh-aw-node:v1@")
    (server,) = _servers(_workflow(pull, tagged))
    assert server.pulled_digests == ((f"ghcr.io/github/gh-aw-node:v1@sha256:{DIGEST}", 8),)
    assert check_mcp_server(server)[0].severity is Severity.LOW


def test_values_the_form_does_not_allow_stay_unknown() -> None:
    server = mcp_server_from_mapping(
        "x",
        {"container": "img:1", "mounts": "/a:/b", "entrypoint": 3, "entrypointArgs": [None]},
        path="f.json",
        line=1,
        declared_in="f.json",
    )
    args = server.args
    assert isinstance(args, tuple)
    assert [type(a) for a in args if isinstance(a, Unknown)] == [Unknown] * 3
    assert "img:1" in args


def test_the_lock_says_the_same_of_it_ag143_low_with_the_digest_to_launch() -> None:
    from agentguard.facts.mcp_pins import ServerLaunch, launch_of
    from agentguard.rules.mcp_pins import image_findings

    (server,) = _servers(_workflow(PULL, GATEWAY))
    launch = launch_of(server)
    assert isinstance(launch, ServerLaunch)
    (finding,) = image_findings([launch])
    ref = f"ghcr.io/github/gh-aw-node@sha256:{DIGEST}"
    assert finding.rule_id == "AG143"
    assert finding.severity is Severity.LOW
    assert ref in finding.message and f"`{ref}`" in finding.fix.description
    (bare,) = _servers(_workflow(GATEWAY))
    bare_launch = launch_of(bare)
    assert isinstance(bare_launch, ServerLaunch)
    assert image_findings([bare_launch])[0].severity is Severity.HIGH


def test_a_digest_in_a_comment_or_a_line_that_pulls_nothing_is_not_credited() -> None:
    """A pull request cannot lower the finding by writing the digest in a comment or an
    echo: only a line that pulls images counts."""
    ref = f"ghcr.io/github/gh-aw-node@sha256:{DIGEST}"
    for planted in (f"# images:\n#   - {ref}\n", f"      - run: echo {ref}\n"):
        text = (
            planted + _workflow(GATEWAY) if planted.startswith("#") else _workflow(planted, GATEWAY)
        )
        (server,) = _servers(text)
        assert server.pulled_digests == ()
        assert check_mcp_server(server)[0].severity is Severity.HIGH
    (pulled,) = _servers(_workflow(f"      - run: docker pull {ref}\n", GATEWAY))
    assert pulled.pulled_digests == ((ref, 7),)
