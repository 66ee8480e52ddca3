"""`inspect IMAGE` finds the agent where the config starts it, not only in the working directory.

Images are built on the real engine FROM scratch (busybox for a shell); nothing is pulled.
Findings are compared whole (snapshots under tests/snapshots/image-agent/, layer digests
replaced by their index, fingerprints dropped).
"""

from __future__ import annotations

import hashlib
import json
import tarfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.inspect.engine_support import (
    Made,
    inspect_cli,
    layers_of,
    report_of,
    unique,
    write_tree,
)
from tests.snapshot import assert_snapshot

pytestmark = pytest.mark.engine

PASSWD = "root:x:0:0:root:/root:/bin/sh\nagent:x:1000:1000::/home/agent:/bin/sh\n"
BOT = """\
from claude_agent_sdk import ClaudeAgentOptions, query

from helpers import task

OPTIONS = ClaudeAgentOptions(permission_mode="bypassPermissions", allowed_tools=["Bash", "Read"])


async def main() -> None:
    async for message in query(prompt=task(), options=OPTIONS):
        print(message)
"""
HELPERS = """\
from claude_agent_sdk import ClaudeAgentOptions

REVIEW = ClaudeAgentOptions(tools=["Read"], setting_sources=[])


def task() -> str:
    return "triage"
"""
MANAGED = '{"permissions": {"allow": ["Bash(*)"], "defaultMode": "bypassPermissions"}}\n'
CLAUDE_JSON = '{"mcpServers": {"fs": {"command": "npx", "args": ["-y", "some-mcp-server"]}}}\n'

ISSUE_CASE = {
    "rootfs/etc/passwd": PASSWD,
    "rootfs/opt/agent/bot.py": BOT,
    "rootfs/opt/agent/helpers.py": HELPERS,
    "rootfs/opt/agent/README.md": "# not code\n",
    "rootfs/etc/claude-code/managed-settings.json": MANAGED,
    "rootfs/home/agent/.claude.json": CLAUDE_JSON,
    "rootfs/home/agent/.claude/settings.json": '{"permissions": {"allow": ["Read"]}}\n',
}
ISSUE_DOCKERFILE = """\
FROM scratch
COPY busybox /bin/busybox
COPY rootfs/ /
WORKDIR /work
USER agent
CMD ["python3", "/opt/agent/bot.py"]
"""


@pytest.fixture()
def made(docker_client: Any) -> Iterator[Made]:
    m = Made(docker_client)
    yield m
    m.cleanup()


def build(made: Made, tmp_path: Path, files: Mapping[str, str], dockerfile: str) -> str:
    tag = unique("agent") + ":1"
    context = tmp_path / "context"
    context.mkdir()
    write_tree(context, files)
    made.build(tag, context, dockerfile)
    return tag


def normalised(report: Mapping[str, Any], layers: list[str]) -> str:
    """Findings and the image-agent sources, layer digests by index, no fingerprints."""
    names = {digest: f"<layer {i}>" for i, digest in enumerate(layers)}
    findings = []
    for f in report["findings"]:
        f = dict(f)
        f.pop("fingerprint", None)
        findings.append(f)
    agent_sources = [s for s in report["sources"] if s["kind"] == "image-agent"]
    text = json.dumps(
        {
            "findings": findings,
            "image_agent_sources": agent_sources,
            "agent": report["facts"]["image"]["agent"],
        },
        indent=2,
        sort_keys=True,
    )
    for digest, name in names.items():
        text = text.replace(digest, name).replace(digest[:19], name)
    return text + "\n"


def test_the_issue_case_agent_outside_an_empty_workdir(
    made: Made, docker_client: Any, tmp_path: Path
) -> None:
    tag = build(made, tmp_path, ISSUE_CASE, ISSUE_DOCKERFILE)
    result = inspect_cli(tag, "--format", "json")
    report = report_of(result)
    assert result.exit_code == 1, result.stdout
    paths = {loc.get("path") for f in report["findings"] for loc in f["locations"]}
    assert {
        "/opt/agent/bot.py",
        "/etc/claude-code/managed-settings.json",
        "/home/agent/.claude.json",
    } <= paths
    assert_snapshot(
        "image-agent/issue-case.json", normalised(report, layers_of(docker_client, tag))
    )


def test_python_m_package_in_site_packages(made: Made, docker_client: Any, tmp_path: Path) -> None:
    site = "rootfs/usr/local/lib/python3.12/site-packages"
    files = {
        "rootfs/etc/passwd": PASSWD,
        f"{site}/triage/__init__.py": "",
        f"{site}/triage/__main__.py": "from triage.agent import run\n\nrun()\n",
        f"{site}/triage/agent.py": (
            "from claude_agent_sdk import ClaudeAgentOptions\n\n"
            'OPTIONS = ClaudeAgentOptions(allowed_tools=["WebFetch"], setting_sources=[])\n\n\n'
            "def run() -> None:\n    pass\n"
        ),
        f"{site}/other/agent.py": (
            "from claude_agent_sdk import ClaudeAgentOptions\n\nX = ClaudeAgentOptions()\n"
        ),
    }
    dockerfile = (
        "FROM scratch\nCOPY busybox /bin/busybox\nCOPY rootfs/ /\nWORKDIR /srv\nUSER agent\n"
        'ENTRYPOINT ["python3", "-u", "-m", "triage"]\n'
    )
    tag = build(made, tmp_path, files, dockerfile)
    result = inspect_cli(tag, "--format", "json")
    report = report_of(result)
    assert result.exit_code == 0, result.stdout  # (AG301 medium: nobody can approve a call)
    assert_snapshot(
        "image-agent/python-m-package.json", normalised(report, layers_of(docker_client, tag))
    )


def test_node_agent_started_through_a_shell_wrapper(
    made: Made, docker_client: Any, tmp_path: Path
) -> None:
    files = {
        "rootfs/etc/passwd": PASSWD,
        "rootfs/usr/local/bin/start-agent": (
            '#!/bin/sh\nset -e\nexport NODE_ENV=production\nexec node /srv/agent/main.mjs "$@"\n'
        ),
        "rootfs/srv/agent/main.mjs": (
            'import { query } from "@anthropic-ai/claude-agent-sdk";\n\n'
            'for await (const m of query({ prompt: "hi", options: { permissionMode: '
            '"bypassPermissions" } })) {\n  console.log(m);\n}\n'
        ),
        "rootfs/srv/agent/node_modules/dep/index.js": "module.exports = 1;\n",
        "rootfs/srv/agent/lib/tools.mjs": (
            'import { query } from "@anthropic-ai/claude-agent-sdk";\n'
            'export const review = () => query({ prompt: "x", options: { tools: ["Read"] } });\n'
        ),
    }
    dockerfile = (
        "FROM scratch\nCOPY busybox /bin/busybox\nCOPY rootfs/ /\n"
        'RUN ["/bin/busybox", "chmod", "755", "/usr/local/bin/start-agent"]\n'
        'WORKDIR /data\nUSER agent\nENTRYPOINT ["/usr/local/bin/start-agent"]\n'
    )
    tag = build(made, tmp_path, files, dockerfile)
    result = inspect_cli(tag, "--format", "json")
    report = report_of(result)
    assert result.exit_code == 1, result.stdout
    assert_snapshot(
        "image-agent/node-shell-wrapper.json", normalised(report, layers_of(docker_client, tag))
    )


def test_an_entrypoint_that_is_a_binary_is_skipped_with_the_reason(
    made: Made, docker_client: Any, tmp_path: Path
) -> None:
    dockerfile = (
        "FROM scratch\nCOPY busybox /bin/busybox\nWORKDIR /data\n"
        'ENTRYPOINT ["/bin/busybox", "httpd", "-f"]\n'
    )
    tag = build(made, tmp_path, {}, dockerfile)
    saved = tmp_path / "saved.tar"
    with saved.open("wb") as out:
        for chunk in docker_client.images.get(tag).save(named=True):
            out.write(chunk)
    late = _config_last(saved, tmp_path / "late.tar.gz")
    for target in (tag, late):  # the engine's stream, and a stream with the config last
        _binary_skipped(report_of(inspect_cli(target, "--format", "json")))


def _binary_skipped(report: Mapping[str, Any]) -> None:
    assert [s for s in report["sources"] if s["status"] == "failed"] == []
    agent_sources = [s for s in report["sources"] if s["kind"] == "image-agent"]
    assert agent_sources == [
        {
            "kind": "image-agent",
            "name": "/bin/busybox httpd -f",
            "status": "skipped",
            "reason": "/bin/busybox is a compiled program (ELF): agentguard cannot read its "
            "settings",
        }
    ]
    assert report["facts"]["image"]["agent"]["launches"] == [
        {
            "argv": "/bin/busybox httpd -f",
            "kind": "program",
            "followed": "/bin/busybox is a compiled program (ELF): agentguard cannot read "
            "its settings",
        }
    ]


def _config_last(saved: Path, out: Path) -> Path:
    """The saved tarball gzip-compressed with its layers before the config: read as a
    one-pass stream, the layers pass before anything says where the agent is."""
    with tarfile.open(saved) as src, tarfile.open(out, "w:gz") as dst:
        members = src.getmembers()
        late = [m for m in members if m.name.endswith(".json") or m.name == "repositories"]
        for m in [m for m in members if m not in late] + late:
            dst.addfile(m, src.extractfile(m) if m.isfile() else None)
    return out


def _oci_layout(saved: Path, root: Path) -> Path:
    """The saved image rewritten as an OCI image layout folder (same layers, same config)."""
    blobs = root / "blobs" / "sha256"
    blobs.mkdir(parents=True)

    def blob(data: bytes) -> tuple[str, int]:
        digest = hashlib.sha256(data).hexdigest()
        (blobs / digest).write_bytes(data)
        return f"sha256:{digest}", len(data)

    with tarfile.open(saved) as tf:

        def read(name: str) -> bytes:
            member = tf.extractfile(name)
            assert member is not None
            return member.read()

        manifest = json.loads(read("manifest.json"))[0]
        config_digest, config_size = blob(read(manifest["Config"]))
        layers = []
        for name in manifest["Layers"]:
            digest, size = blob(read(name))
            layers.append(
                {
                    "mediaType": "application/vnd.oci.image.layer.v1.tar",
                    "digest": digest,
                    "size": size,
                }
            )
    oci_manifest = json.dumps(
        {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {
                "mediaType": "application/vnd.oci.image.config.v1+json",
                "digest": config_digest,
                "size": config_size,
            },
            "layers": layers,
        }
    ).encode()
    m_digest, m_size = blob(oci_manifest)
    (root / "oci-layout").write_text('{"imageLayoutVersion": "1.0.0"}')
    (root / "index.json").write_text(
        json.dumps(
            {
                "schemaVersion": 2,
                "manifests": [
                    {
                        "mediaType": "application/vnd.oci.image.manifest.v1+json",
                        "digest": m_digest,
                        "size": m_size,
                    }
                ],
            }
        )
    )
    return root


def test_saved_tarball_and_oci_layout_give_the_same_findings(
    made: Made, docker_client: Any, tmp_path: Path
) -> None:
    tag = build(made, tmp_path, ISSUE_CASE, ISSUE_DOCKERFILE)
    saved = tmp_path / "saved.tar"
    with saved.open("wb") as out:
        for chunk in docker_client.images.get(tag).save(named=True):
            out.write(chunk)
    layout = _oci_layout(saved, tmp_path / "layout")
    layers = layers_of(docker_client, tag)
    from_engine = report_of(inspect_cli(tag, "--format", "json"))
    from_tar = report_of(inspect_cli(saved, "--format", "json"))
    from_layout = report_of(inspect_cli(layout, "--format", "json"))
    from_stream = report_of(
        inspect_cli(_config_last(saved, tmp_path / "late.tar.gz"), "--format", "json")
    )
    expected = normalised(from_engine, layers)
    assert expected.count('"rule_id"') >= 3
    assert normalised(from_tar, layers) == expected
    assert normalised(from_layout, layers) == expected
    assert normalised(from_stream, layers) == expected
    assert [s for s in from_stream["sources"] if s["status"] == "failed"] == []


def test_files_deleted_by_a_later_layer_are_not_there(
    made: Made, docker_client: Any, tmp_path: Path
) -> None:
    dockerfile = ISSUE_DOCKERFILE.replace(
        "WORKDIR /work\n",
        'RUN ["/bin/busybox", "rm", "/etc/claude-code/managed-settings.json", '
        '"/home/agent/.claude.json"]\nWORKDIR /work\n',
    )
    tag = build(made, tmp_path, ISSUE_CASE, dockerfile)
    report = report_of(inspect_cli(tag, "--format", "json"))
    paths = {loc.get("path") for f in report["findings"] for loc in f["locations"]}
    assert "/opt/agent/bot.py" in paths
    assert "/etc/claude-code/managed-settings.json" not in paths
    assert "/home/agent/.claude.json" not in paths
    assert [f["path"] for f in report["facts"]["image"]["agent"]["files"]] == [
        "/home/agent/.claude/settings.json",
        "/opt/agent/bot.py",
        "/opt/agent/helpers.py",
    ]


CLI = "rootfs/usr/local/lib/node_modules/@anthropic-ai/claude-code"


def test_a_claude_cli_entrypoint_without_flags_is_reported_with_its_defaults(
    made: Made, docker_client: Any, tmp_path: Path
) -> None:
    files = {
        f"{CLI}/package.json": '{"name": "@anthropic-ai/claude-code", "version": "2.1.0"}\n',
        f"{CLI}/cli.js": "#!/usr/bin/env node\n",
    }
    context = tmp_path / "context"
    context.mkdir()
    write_tree(context, files)
    (context / "rootfs/usr/local/bin").mkdir(parents=True)
    (context / "rootfs/usr/local/bin/claude").symlink_to(
        "../lib/node_modules/@anthropic-ai/claude-code/cli.js"
    )
    tag = unique("agent") + ":1"
    made.build(
        tag,
        context,
        "FROM scratch\nCOPY busybox /bin/busybox\nCOPY rootfs/ /\nWORKDIR /work\nUSER 1000\n"
        'ENV CLAUDE_CODE_SHELL_PREFIX=/usr/local/bin/audit\nENTRYPOINT ["claude", "-p"]\n',
    )
    report = report_of(inspect_cli(tag, "--format", "json"))
    assert_snapshot(
        "image-agent/claude-cli-defaults.json", normalised(report, layers_of(docker_client, tag))
    )


def test_a_containers_environment_is_read_and_redacted(
    made: Made, docker_client: Any, tmp_path: Path
) -> None:
    files = {**ISSUE_CASE, "rootfs/cfg/settings.json": '{"permissions": {"allow": ["Bash"]}}\n'}
    tag = build(made, tmp_path, files, ISSUE_DOCKERFILE)
    container = made.container(
        tag,
        environment={
            "CLAUDE_CONFIG_DIR": "/cfg",
            "ANTHROPIC_BASE_URL": "https://user:sk-ant-api03-secretsecretsecret@proxy.example",
        },
    )
    report = report_of(inspect_cli(container.id, "--format", "json"))
    agent = report["facts"]["image"]["agent"]
    assert agent["claude_env"] == [
        {"name": "CLAUDE_CONFIG_DIR", "value": "/cfg"},
        {"name": "ANTHROPIC_BASE_URL", "value": "REDACTED"},
    ]
    assert "sk-ant-api03" not in json.dumps(report)
    assert [f["path"] for f in agent["files"] if f["why"].startswith("user")] == [
        "/cfg/settings.json"
    ]


def test_harden_from_the_image_rewrites_the_agent_the_image_runs(
    made: Made, docker_client: Any, tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from agentguard.cli import app

    tag = build(made, tmp_path, ISSUE_CASE, ISSUE_DOCKERFILE)
    out = tmp_path / "hardened"
    result = CliRunner().invoke(app, ["harden", tag, "--out", str(out)], env={"NO_COLOR": "1"})
    assert result.exit_code in (0, 1), result.stdout
    snippet = (out / "agent" / "bot_hardened.py").read_text()
    assert "ClaudeAgentOptions(" in snippet
    assert "bypassPermissions" not in snippet.split("ClaudeAgentOptions(", 1)[1]
    summary = (out / "SUMMARY.md").read_text()
    assert "- `/opt/agent/bot.py:5` (claude-agent-sdk): replace its options with" in summary


def test_the_agent_settings_and_managed_policy_behind_folder_links(
    made: Made, docker_client: Any, tmp_path: Path
) -> None:
    """Issue 23 item 4 on the real engine: `/app -> /opt/real`, `/etc/claude-code -> /opt/cc`,
    `~/.claude -> /data/cc` made by `ln -s` in their own layer; the engine's save stream is
    read again for what the links lead to. Before, 0 findings and "/app/bot.py is not in
    the image"."""
    files = {
        "rootfs/etc/passwd": PASSWD,
        "rootfs/opt/real/bot.py": BOT,
        "rootfs/opt/real/helpers.py": HELPERS,
        "rootfs/opt/cc/managed-settings.json": MANAGED,
        "rootfs/data/cc/settings.json": '{"permissions": {"defaultMode": "bypassPermissions"}}\n',
    }
    dockerfile = (
        "FROM scratch\nCOPY busybox /bin/busybox\nCOPY rootfs/ /\n"
        'RUN ["/bin/busybox", "mkdir", "-p", "/home/agent"]\n'
        'RUN ["/bin/busybox", "ln", "-s", "/opt/real", "/app"]\n'
        'RUN ["/bin/busybox", "ln", "-s", "/opt/cc", "/etc/claude-code"]\n'
        'RUN ["/bin/busybox", "ln", "-s", "../../data/cc", "/home/agent/.claude"]\n'
        'WORKDIR /work\nUSER agent\nCMD ["python3", "/app/bot.py"]\n'
    )
    tag = build(made, tmp_path, files, dockerfile)
    result = inspect_cli(tag, "--format", "json")
    report = report_of(result)
    assert result.exit_code == 1, result.stdout
    found = {(f["rule_id"], loc.get("path")) for f in report["findings"] for loc in f["locations"]}
    assert {
        ("AG305", "/opt/real/bot.py"),
        ("AG301", "/opt/real/bot.py"),
        ("AG305", "/etc/claude-code/managed-settings.json"),
        ("AG305", "/home/agent/.claude/settings.json"),
    } <= found
    assert "not in the image" not in json.dumps(report["sources"])
    assert [s for s in report["sources"] if s["status"] == "failed"] == []
    files_read = {f["path"]: f["why"] for f in report["facts"]["image"]["agent"]["files"]}
    assert files_read["/opt/real/helpers.py"] == "source tree of /opt/real/bot.py"
    assert files_read["/home/agent/.claude/settings.json"] == (
        "user settings (/home/agent/.claude/settings.json -> /data/cc/settings.json through links)"
    )
