"""`agentguard inspect` on images built with the real engine: by reference, from `docker save`
output, and from a truncated tarball. Whole findings, exit codes, no secret in any output."""

from __future__ import annotations

import json
import os
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.inspect.engine_support import (
    SITE,
    Made,
    dist_info,
    findings_of,
    inspect_cli,
    layers_of,
    metadata,
    report_of,
    steps_of,
    unique,
    write_tree,
)

pytestmark = pytest.mark.engine

SECRET = "sk-ant-api03-" + "Z" * 40
LOCK = """lock-version = "1.0"
created-by = "agentguard"
{packages}"""
PACKAGE = """
[[packages]]
name = "{name}"
version = "{version}"
wheels = [{{ name = "{file}", url = "https://files.example.invalid/{file}", hashes = {{ sha256 = "{zeros}" }} }}]
"""


def pylock(path: Path, pins: dict[str, str]) -> Path:
    packages = "".join(
        PACKAGE.format(
            name=n, version=v, file=f"{n.replace('-', '_')}-{v}-py3-none-any.whl", zeros="0" * 64
        )
        for n, v in pins.items()
    )
    path.write_text(LOCK.format(packages=packages))
    return path


@pytest.fixture(scope="module")
def agent_image(docker_client: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The incident's image: the project copied into the workdir, an mcp major nobody
    reviewed, a key baked into ENV, no USER. A later layer deletes one document."""
    made = Made(docker_client)
    ctx = tmp_path_factory.mktemp("agent-image")
    write_tree(
        ctx / "project",
        {
            ".git/HEAD": "ref: refs/heads/main\n",
            "pyproject.toml": "[project]\nname = 'agent'\n",
            "docs/plan-q3.md": "# internal plan: not for the agent\n",
            "docs/old-plan.md": "# superseded, deleted in a later layer\n",
            ".env": f"ANTHROPIC_API_KEY={SECRET}\n",
            "agent.py": "from claude_agent_sdk import query\n",
            ".mcp.json": '{"mcpServers": {}}\n',
            "CLAUDE.md": "# notes for the agent\n",
        },
    )
    write_tree(
        ctx / "site",
        {
            f"{dist_info('mcp', '2.3.0')}/METADATA": metadata("mcp", "2.3.0", ["anyio>=4.5"]),
            f"{dist_info('claude-agent-sdk', '0.2.100')}/METADATA": metadata(
                "claude-agent-sdk", "0.2.100", ["mcp<2.0.0,>=1.23.0", "anyio>=4.0.0"]
            ),
            f"{dist_info('anyio', '4.6.0')}/METADATA": metadata("anyio", "4.6.0"),
        },
    )
    tag = f"{unique('agent')}:1"
    made.build(
        tag,
        ctx,
        f"""FROM scratch
COPY busybox /bin/busybox
COPY site/ {SITE}/
ENV ANTHROPIC_API_KEY={SECRET} PATH=/bin
COPY project/ /app/
RUN ["/bin/busybox", "rm", "/app/docs/old-plan.md"]
WORKDIR /app
""",
    )
    yield tag
    made.cleanup()


def expected_findings(client: Any, tag: str, target: str, lock: str) -> list[dict[str, Any]]:
    layers = layers_of(client, tag)
    raw_step = steps_of(client, tag)[3]  # as the image history has it
    project_step = " ".join(raw_step.split())
    meta = {
        n: f"{SITE}/{dist_info(n, v)}/METADATA"
        for n, v in (("mcp", "2.3.0"), ("claude-agent-sdk", "0.2.100"))
    }
    site_layer = layers[1]

    def cand(name: str, version: str) -> dict[str, str]:
        return {
            "version": version,
            "location": SITE,
            "metadata_path": meta[name],
            "layer": site_layer,
        }

    def finding(
        rule: str,
        title: str,
        severity: str,
        message: str,
        locations: list[dict[str, Any]],
        evidence: dict[str, Any],
        fix: dict[str, Any],
        **kw: Any,
    ) -> dict[str, Any]:
        return {
            "rule_id": rule,
            "title": title,
            "severity": severity,
            "confidence": kw.get("confidence", "high"),
            "message": message,
            "locations": locations,
            "evidence": evidence,
            "fix": fix,
            "ambiguous": kw.get("ambiguous", False),
            "suppressed": None,
        }

    return [
        finding(
            "AG201",
            "Working directory of the image holds a project",
            "critical",
            f"The working directory /app of image {target} holds a project (document, env-file, "
            f"manifest, vcs): .env, .git, CLAUDE.md, docs/plan-q3.md, pyproject.toml; added by "
            f"layer 2 ({project_step}). The agent can read 1 secret file(s).",
            [{"path": p, "layer": layers[2]} for p in ("/app/.env", "/app/.git", "/app/CLAUDE.md")],
            {
                "image": target,
                "workdir": "/app",
                "layer": layers[2],
                "layer_index": 2,
                "created_by": raw_step,
                "categories": ["document", "env-file", "manifest", "vcs"],
                "paths": [
                    "/app/.env",
                    "/app/.git",
                    "/app/CLAUDE.md",
                    "/app/docs/plan-q3.md",
                    "/app/pyproject.toml",
                ],
                "paths_total": 5,
                "listing_capped": False,
            },
            {
                "description": "Copy only what the agent needs to run into the image (a built wheel or the "
                "package folder), keep /app empty or a dedicated scratch folder, and add a .dockerignore "
                "that keeps .git, docs, .env and keys out of the build context.",
                "safe": False,
                "snippet": ".git\n*.md\ndocs/\n.env*\n*.pem\n*.key\n",
            },
        ),
        finding(
            "AG402",
            "Literal secret in environment or build history",
            "critical",
            f"image {target} sets ANTHROPIC_API_KEY to a literal value in the image config (ENV) (its "
            "value has a known key format: anthropic or openai key); value redacted, sha256 prefix "
            "761bc42f.",
            [{"note": f"image {target} config Env"}],
            {
                "subject": f"image {target}",
                "variable": "ANTHROPIC_API_KEY",
                "set_where": "the image config (ENV)",
                "detected_by": "anthropic-or-openai-key",
                "value": "redacted",
                "value_sha256_prefix": "761bc42f",
            },
            {
                "description": "Remove the literal ANTHROPIC_API_KEY from the image config (ENV), pass it at "
                "run time from a secret store (`--env ANTHROPIC_API_KEY` passes the caller's value "
                "through), and rotate it: anyone who can read the image or the config has it.",
                "safe": False,
                "snippet": "--env ANTHROPIC_API_KEY",
            },
        ),
        finding(
            "AG110",
            "Installed packages drift from the lock",
            "high",
            f"mcp is locked at 1.27.0 in {lock} but image {target} has 2.3.0 in {SITE}.",
            [{"path": meta["mcp"], "layer": site_layer}, {"path": lock}],
            {
                "package": "mcp",
                "drift": "other-version",
                "locked": ["1.27.0"],
                "markers": [None],
                "installed": [cand("mcp", "2.3.0")],
            },
            {
                "description": "Rebuild the image installing the lock with `--require-hashes` so mcp is "
                "1.27.0; if the new version is wanted, re-run `agentguard lock` and review it.",
                "safe": False,
                "snippet": "mcp==1.27.0",
            },
        ),
        finding(
            "AG111",
            "Installed set does not satisfy its own Requires-Dist",
            "high",
            f"claude-agent-sdk 0.2.100 requires mcp<2.0.0,>=1.23.0 but installed: 2.3.0 in {SITE} "
            f"(image {target}).",
            [
                {"path": meta["claude-agent-sdk"], "layer": site_layer},
                {"path": meta["mcp"], "layer": site_layer},
            ],
            {
                "package": "claude-agent-sdk",
                "version": "0.2.100",
                "requires": "mcp<2.0.0,>=1.23.0",
                "child": "mcp",
                "installed": [cand("mcp", "2.3.0")],
                "marker_decided": True,
            },
            {
                "description": "Resolve claude-agent-sdk and mcp together (`agentguard lock`) and install "
                "the lock, so mcp satisfies `<2.0.0,>=1.23.0`.",
                "safe": False,
            },
        ),
        finding(
            "AG110",
            "Installed packages drift from the lock",
            "medium",
            f"claude-agent-sdk is installed in image {target} (0.2.100 in {SITE}) but the lock does "
            "not list it.",
            [{"path": meta["claude-agent-sdk"], "layer": site_layer}],
            {
                "package": "claude-agent-sdk",
                "drift": "extra",
                "locked": [],
                "installed": [cand("claude-agent-sdk", "0.2.100")],
                "installer_tooling": False,
            },
            {
                "description": "Remove claude-agent-sdk from the image, or add it to the project's "
                "requirements and re-run `agentguard lock`.",
                "safe": False,
            },
        ),
        finding(
            "AG401",
            "Runs as root",
            "medium",
            f"image {target} runs as root (user (not set: root), from the image's USER).",
            [{"note": f"image {target} config User"}],
            {"subject": f"image {target}", "user": "", "set_where": "the image's USER"},
            {
                "description": "Create an unprivileged user and run as it: `USER 10001:10001` in the "
                'Dockerfile, or `--user 10001:10001` / `user: "10001:10001"` where the container is '
                "started.",
                "safe": False,
                "snippet": "USER 10001:10001",
            },
        ),
        finding(
            "AG113",
            "Agent-stack packages installed",
            "info",
            f"Image {target} carries claude-agent-sdk 0.2.100 (major 0.2) in {SITE}.",
            [{"path": meta["claude-agent-sdk"], "layer": site_layer}],
            {
                "package": "claude-agent-sdk",
                "versions": ["0.2.100"],
                "majors": ["0.2"],
                "candidates": [cand("claude-agent-sdk", "0.2.100")],
            },
            {
                "description": "Nothing to change; pin claude-agent-sdk in the lock and inspect with --lock.",
                "safe": False,
            },
        ),
        finding(
            "AG113",
            "Agent-stack packages installed",
            "info",
            f"Image {target} carries mcp 2.3.0 (major 2) in {SITE}.",
            [{"path": meta["mcp"], "layer": site_layer}],
            {
                "package": "mcp",
                "versions": ["2.3.0"],
                "majors": ["2"],
                "candidates": [cand("mcp", "2.3.0")],
            },
            {
                "description": "Nothing to change; pin mcp in the lock and inspect with --lock.",
                "safe": False,
            },
        ),
    ]


RULES = (
    "AG110",
    "AG111",
    "AG112",
    "AG113",
    "AG201",
    "AG202",
    "AG203",
    "AG204",
    *tuple(f"AG40{i}" for i in range(1, 8)),
)


def test_image_by_reference(
    docker_client: Any, agent_image: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    pylock(tmp_path / "pylock.toml", {"anyio": "4.6.0", "mcp": "1.27.0"})

    result = inspect_cli(agent_image, "--lock", "pylock.toml", "--format", "json")

    assert result.exit_code == 1, result.stderr  # complete, findings at or above high
    report = report_of(result)
    assert report["complete"] is True
    assert findings_of(report, *RULES) == expected_findings(
        docker_client, agent_image, agent_image, "pylock.toml"
    )
    image = docker_client.images.get(agent_image)
    inputs = report["provenance"]["inputs"]
    assert inputs["image_id"] == image.id
    assert inputs["repo_digests"] == []
    assert inputs["lock"]["path"] == "pylock.toml"
    assert inputs["lock"]["discovered"] is False
    assert inputs["lock"]["sha256"].startswith("sha256:")
    facts = report["facts"]["image"]
    assert [(f["path"], f["kind"]) for f in facts["agent_config_files"]] == [
        ("/app/.mcp.json", "mcp-config"),
        ("/app/CLAUDE.md", "agent-instructions"),
        ("/app/agent.py", "agent-code"),
    ]
    assert sorted(facts["env_names"]) == ["ANTHROPIC_API_KEY", "PATH"]
    # the key is in ENV, in the build history and in /app/.env: it appears nowhere in the report
    assert SECRET not in result.stdout
    # the document deleted by a later layer is not reported as something the agent can read
    assert "/app/docs/old-plan.md" not in json.dumps(report["findings"])


def test_lock_discovered_in_the_current_directory(
    agent_image: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    pylock(
        tmp_path / "pylock.toml", {"anyio": "4.6.0", "claude-agent-sdk": "0.2.100", "mcp": "2.3.0"}
    )
    report = report_of(inspect_cli(agent_image, "--format", "json"))
    assert report["provenance"]["inputs"]["lock"]["discovered"] is True
    assert "compared with pylock.toml (found in the current directory)" in report["notes"]
    assert findings_of(report, "AG110") == []
    assert (
        findings_of(report_of(inspect_cli(agent_image, "--format", "json", "--no-lock")), "AG110")
        == []
    )


def test_docker_save_tarball_gives_the_same_findings(
    docker_client: Any, agent_image: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    saved = tmp_path / "agent.tar"
    with saved.open("wb") as fh:
        for chunk in docker_client.images.get(agent_image).save(named=True):
            fh.write(chunk)
    pylock(tmp_path / "pylock.toml", {"anyio": "4.6.0", "mcp": "1.27.0"})

    result = inspect_cli(saved, "--lock", "pylock.toml", "--format", "json")

    assert result.exit_code == 1, result.stderr
    report = report_of(result)
    assert report["facts"]["target"] == {
        "text": str(saved),
        "kind": "archive",
        "how": "a local path",
    }
    assert findings_of(report, *RULES) == expected_findings(
        docker_client, agent_image, str(saved), "pylock.toml"
    )
    assert SECRET not in result.stdout


def _reordered_and_cut(saved: Path, out: Path) -> str:
    """The same `docker save` with manifest.json first and the project layer last, cut
    in the middle of that layer: what a download that broke off looks like."""
    with tarfile.open(saved) as src:
        members = src.getmembers()
        manifest = json.load(src.extractfile("manifest.json"))  # type: ignore[arg-type]
        victim = manifest[0]["Layers"][2]
        order = [m for m in members if not m.name.endswith("layer.tar")]
        order += [m for m in members if m.name.endswith("layer.tar") and m.name != victim]
        order += [m for m in members if m.name == victim]
        with tarfile.open(out, "w") as dst:
            for m in order:
                dst.addfile(m, src.extractfile(m) if m.isfile() else None)
        size = src.getmember(victim).size
    total = os.path.getsize(out)
    with out.open("r+b") as fh:
        fh.truncate(total - 1024 - (-size % 512) - size // 2)
    return victim


def test_truncated_tarball_is_exit_3_naming_the_layer(
    docker_client: Any, agent_image: str, tmp_path: Path
) -> None:
    saved = tmp_path / "agent.tar"
    with saved.open("wb") as fh:
        for chunk in docker_client.images.get(agent_image).save(named=True):
            fh.write(chunk)
    cut = tmp_path / "cut.tar"
    member = _reordered_and_cut(saved, cut)

    result = inspect_cli(cut, "--no-lock", "--format", "json")

    assert result.exit_code == 3
    report = report_of(result)
    assert report["complete"] is False
    project_layer = layers_of(docker_client, agent_image)[2]
    failed = [
        (s["kind"], s["name"], s["error_code"])
        for s in report["sources"]
        if s["status"] == "failed"
    ]
    assert ("image-layer", f"layer 2 {project_layer}", "truncated") in failed
    layer_source = next(s for s in report["sources"] if s["name"] == f"layer 2 {project_layer}")
    assert member in layer_source["reason"]
    # what was read is still reported: the findings of the intact layers
    assert {f["rule_id"] for f in report["findings"]} >= {"AG401", "AG402", "AG111"}
    assert SECRET not in result.stdout


def test_two_installs_of_one_package_are_one_ambiguous_finding(
    docker_client: Any, tmp_path: Path
) -> None:
    made = Made(docker_client)
    try:
        tag = f"{unique('twice')}:1"
        venv = "opt/venv/lib/python3.12/site-packages"
        made.import_tar(
            tag,
            {
                f"{SITE.lstrip('/')}/{dist_info('mcp', '1.27.0')}/METADATA": metadata(
                    "mcp", "1.27.0"
                ),
                f"{venv}/{dist_info('mcp', '2.3.0')}/METADATA": metadata("mcp", "2.3.0"),
            },
            ["USER 10001", "WORKDIR /work"],
        )
        layer = layers_of(docker_client, tag)[0]
        report = report_of(inspect_cli(tag, "--no-lock", "--format", "json"))
    finally:
        made.cleanup()
    paths = [
        (f"/{venv}", "2.3.0"),
        (SITE, "1.27.0"),
    ]
    candidates = [
        {
            "version": v,
            "location": loc,
            "metadata_path": f"{loc}/{dist_info('mcp', v)}/METADATA",
            "layer": layer,
        }
        for loc, v in paths
    ]
    assert findings_of(report, "AG112") == [
        {
            "rule_id": "AG112",
            "title": "Same distribution installed twice",
            "severity": "medium",
            "confidence": "high",
            "message": f"mcp is installed 2 times in image {tag}: 2.3.0 in /{venv}; 1.27.0 in "
            f"{SITE}. Which one is imported depends on sys.path.",
            "locations": [{"path": c["metadata_path"], "layer": layer} for c in candidates],
            "evidence": {"package": "mcp", "candidates": candidates},
            "fix": {
                "description": "Install mcp into one environment only and remove the other copy in "
                "the layer that installed it.",
                "safe": False,
            },
            "ambiguous": True,
            "suppressed": None,
        }
    ]
    [inventory] = findings_of(report, "AG113")
    assert inventory["ambiguous"] is True
    assert inventory["evidence"]["majors"] == ["2", "1"]
