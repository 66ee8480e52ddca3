"""Codex and Gemini CLI: harden writes the hardened configuration files and the exact
replacement lines, claims only what `inspect` then no longer reports, and says why the
rest stays open.

The round trip goes further than the written folder: every replacement line of SUMMARY.md
is applied to a copy of the original project (and the written configuration files put in
place of the originals); `inspect` on that copy reports none of the claimed findings.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agentguard.harden.engines import replaced
from agentguard.harden.run import HardenResult
from agentguard.inspect.targets import Kind
from tests.harden.support import (
    FIXTURES,
    claimed_ids,
    harden_folder,
    inspect_report,
    rule_ids,
)

# fixture -> {rule id: files the claim names}
CASES: dict[str, dict[str, tuple[str, ...]]] = {
    "AG305/codex-config-full-access": {"AG305": (".codex/config.toml",)},
    "AG305/codex-exec-bypass": {"AG305": ("SUMMARY.md",)},
    "AG305/gemini-yolo-sandbox-off": {"AG305": ("SUMMARY.md", ".gemini/settings.json")},
    "AG305/codex-action-full-access": {"AG305": ("SUMMARY.md",)},
    "AG301/gemini-allowed-shell": {"AG301": (".gemini/settings.json",)},
    "AG301/codex-danger-sandbox": {"AG301": ("SUMMARY.md",)},
}


def _fixture(case: str) -> Path:
    rule, name = case.split("/")
    return FIXTURES / rule / "fail" / name


def _applied(project: Path, result: HardenResult, out: Path, to: Path) -> Path:
    """A copy of ``project`` with every replacement applied and every written engine
    configuration file in place of its original."""
    shutil.copytree(project, to)
    for change in result.plan.engines.lines.values():
        path = to / change.path
        path.write_text(replaced(path.read_text(), change))
    for src, dst in result.plan.engines.written.items():
        shutil.copyfile(out / dst, to / src)
    return to


@pytest.mark.parametrize("case", sorted(CASES))
def test_round_trip(case: str, tmp_path: Path) -> None:
    project = _fixture(case)
    out = tmp_path / "out"
    result = harden_folder(project, out)

    assert {c.finding.rule_id: c.files for c in result.plan.claims} == CASES[case]
    assert result.plan.opens == []
    assert [f.suppressed for f in result.report.findings] == [
        "fixed by agentguard harden: " + ", ".join(CASES[case][next(iter(CASES[case]))])
    ]
    after = inspect_report(out, Kind.PROJECT)
    assert after.complete
    assert rule_ids(after) & claimed_ids(result.plan) == set()
    applied = inspect_report(_applied(project, result, out, tmp_path / "applied"), Kind.PROJECT)
    assert applied.complete
    assert rule_ids(applied) & claimed_ids(result.plan) == set()


HEADER = (
    "# agentguard harden: the hardened agent engine configuration, made from {target} "
    "(project).\n"
    "# Read SUMMARY.md beside this file: what changed and why, finding by finding.\n"
)


def test_the_codex_config_keeps_every_other_key(tmp_path: Path) -> None:
    project = tmp_path / "p"
    (project / ".codex").mkdir(parents=True)
    (project / ".codex" / "config.toml").write_text(
        'model = "gpt-5.1"\n'
        'approval_policy = "never"\n'
        'sandbox_mode = "danger-full-access"  # unattended\n'
        "\n"
        "[profiles.ci]\n"
        'sandbox_mode = "danger-full-access"\n'
        'approval_policy = "never"\n'
        "\n"
        "[profiles.review]\n"
        'sandbox_mode = "read-only"\n'
        "\n"
        "[mcp_servers.docs]\n"
        'command = "uvx"\n'
        'args = ["mcp-server-fetch==2025.4.7"]\n'
    )
    result = harden_folder(project, tmp_path / "out")

    text = (tmp_path / "out" / ".codex" / "config.toml").read_text()
    assert text == HEADER.format(target=project) + (
        "# Hardened from .codex/config.toml.\n"
        'model = "gpt-5.1"\n'
        'approval_policy = "on-request"  # agentguard harden: was "never"\n'
        'sandbox_mode = "workspace-write"  # agentguard harden: was "danger-full-access"\n'
        "\n"
        "[profiles.ci]\n"
        'sandbox_mode = "workspace-write"  # agentguard harden: was "danger-full-access"\n'
        'approval_policy = "on-request"  # agentguard harden: was "never"\n'
        "\n"
        "[profiles.review]\n"
        'sandbox_mode = "read-only"\n'
        "\n"
        "[mcp_servers.docs]\n"
        'command = "uvx"\n'
        'args = ["mcp-server-fetch==2025.4.7"]\n'
    )
    assert {(c.finding.rule_id, c.finding.locations[0].line) for c in result.plan.claims} >= {
        ("AG305", 3),
        ("AG305", 6),
    }


def test_a_codex_config_without_the_keys_gets_them_before_its_first_table(
    tmp_path: Path,
) -> None:
    project = tmp_path / "p"
    (project / ".codex").mkdir(parents=True)
    (project / ".codex" / "config.toml").write_text(
        'model = "o3"\n\n[profiles.yolo]\nsandbox_mode = "danger-full-access"\n'
    )
    harden_folder(project, tmp_path / "out")

    text = (tmp_path / "out" / ".codex" / "config.toml").read_text()
    assert text.split("\n", 3)[3] == (
        'model = "o3"\n'
        'sandbox_mode = "workspace-write"  # agentguard harden: added\n'
        'approval_policy = "on-request"  # agentguard harden: added\n'
        "\n"
        "[profiles.yolo]\n"
        'sandbox_mode = "workspace-write"  # agentguard harden: was "danger-full-access"\n'
    )


def test_a_layout_the_line_edit_cannot_follow_is_written_from_the_parsed_document() -> None:
    from agentguard.harden.engine_configs import hardened_codex_config

    text = hardened_codex_config(
        'profiles.ci.sandbox_mode = "danger-full-access"\nmodel = "o3"\n', ["h"]
    )
    assert text == (
        "# h\n"
        'model = "o3"\n'
        'sandbox_mode = "workspace-write"\n'
        'approval_policy = "on-request"\n'
        "\n"
        "[profiles.ci]\n"
        'sandbox_mode = "workspace-write"\n'
    )


def test_gemini_settings_flat_keys_and_the_summary(tmp_path: Path) -> None:
    project = tmp_path / "p"
    (project / ".gemini").mkdir(parents=True)
    (project / ".gemini" / "settings.json").write_text(
        '{"sandbox": false, "allowedTools": ["run_shell_command", "run_shell_command(git status)"],'
        ' "general": {"defaultApprovalMode": "yolo"}}'
    )
    result = harden_folder(project, tmp_path / "out")

    text = (tmp_path / "out" / ".gemini" / "settings.json").read_text()
    assert text == HEADER.replace("# ", "// ").format(target=project) + (
        "// Hardened from .gemini/settings.json.\n"
        "{\n"
        '  "allowedTools": [\n'
        '    "run_shell_command(git status)"\n'
        "  ],\n"
        '  "general": {\n'
        '    "defaultApprovalMode": "default"\n'
        "  },\n"
        '  "tools": {\n'
        '    "sandbox": true\n'
        "  },\n"
        '  "security": {\n'
        '    "disableYoloMode": true\n'
        "  }\n"
        "}\n"
    )
    # (YOLO mode as the default approval mode: AG305, not AG301 for the shell)
    assert claimed_ids(result.plan) == {"AG305"}
    summary = (tmp_path / "out" / "SUMMARY.md").read_text()
    section = summary.split("## Codex and Gemini CLI changes\n\n", 1)[1].split("\n\n", 1)[0]
    assert section == (
        "- `.gemini/settings.json`: use it instead of `.gemini/settings.json` (tools.sandbox "
        "on, security.disableYoloMode (the CLI refuses --yolo), tools.allowed without the bare "
        "run_shell_command; other keys kept)\n"
        "  - with it, `gemini --yolo` refuses to start (YOLO mode is disabled): start the CLI "
        "without `--yolo` (the replacement lines below)"
    )


def test_a_dockerfile_line_says_to_rebuild(tmp_path: Path) -> None:
    out = tmp_path / "out"
    harden_folder(_fixture("AG301/codex-danger-sandbox"), out)
    summary = (out / "SUMMARY.md").read_text()
    section = summary.split("## Codex and Gemini CLI changes\n\n", 1)[1].split("\n\n", 1)[0]
    assert section == (
        "- `Dockerfile:5` (codex command line): replace\n"
        "  ```\n"
        '  ENTRYPOINT ["codex", "--sandbox", "danger-full-access", "--ask-for-approval", '
        '"on-request"]\n'
        "  ```\n"
        "  with\n"
        "  ```\n"
        '  ENTRYPOINT ["codex", "--sandbox", "workspace-write", "--ask-for-approval", '
        '"on-request"]\n'
        "  ```\n"
        "  and rebuild the image: the line is part of it"
    )


def test_a_config_holding_a_literal_secret_is_never_copied(tmp_path: Path) -> None:
    project = tmp_path / "p"
    (project / ".codex").mkdir(parents=True)
    (project / ".codex" / "config.toml").write_text(
        'sandbox_mode = "danger-full-access"\n\n[mcp_servers.gh]\ncommand = "gh-mcp"\n'
        '[mcp_servers.gh.env]\nGITHUB_TOKEN = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"\n'
    )
    result = harden_folder(project, tmp_path / "out")

    assert not (tmp_path / "out" / ".codex").exists()
    opened = {o.finding.rule_id: o.why for o in result.plan.opens}
    assert opened["AG301"] == (
        "it holds a literal secret value, which harden never copies into its output"
    )
    assert "ghp_0123456789" not in (tmp_path / "out" / "SUMMARY.md").read_text()
    todo = {o.finding.rule_id: o.todo for o in result.plan.opens}["AG301"]
    assert todo == "Move the secret out of the file (pass it by name), then harden again."
