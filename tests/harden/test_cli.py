"""The `harden` command: usage errors (exit 2), the report on stdout, exit codes, the output
folder kept to what this run wrote."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentguard.harden.output import digest
from tests.harden.support import FIXTURES, harden_cli, json_report

COMPOSE_CASE = FIXTURES / "AG403" / "fail" / "compose-privileged"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--user", "0"], "--user '0': uid and gid 0 are root; pick another"),
        (
            ["--allow-mount", "/srv/checkout:/work"],
            "--allow-mount /srv/checkout:/work: /work is at the working directory /work; mount "
            "it elsewhere so the working directory stays empty",
        ),
        (
            ["--allow-mount", "/srv/checkout"],
            "--allow-mount '/srv/checkout': expected HOST:CONTAINER",
        ),
        (
            ["--network", "host"],
            "--network 'host': expected `none` or the name of a network (not `host`: it shares "
            "the host's network namespace)",
        ),
        (
            ["--kind", "tarball"],
            "unknown --kind 'tarball' (expected one of: image, container, archive, oci, compose, "
            "project, file)",
        ),
        (
            ["--fail-on", "severe"],
            "unknown severity 'severe' (expected one of: info, low, medium, high, critical)",
        ),
    ],
)
def test_options_that_would_undo_the_hardening_exit_2(
    args: list[str], message: str, tmp_path: Path
) -> None:
    result = harden_cli(COMPOSE_CASE, "--out", tmp_path / "o", *args)
    assert result.exit_code == 2
    assert result.stderr == f"agentguard: error: {message}\n"
    assert not (tmp_path / "o").exists()


def test_the_text_report_lists_what_was_fixed_and_where_the_files_are(tmp_path: Path) -> None:
    out = tmp_path / "o"
    result = harden_cli(COMPOSE_CASE, "--out", out)
    assert result.exit_code == 0
    fixed = "(suppressed: fixed by agentguard harden: docker-run.sh, docker-compose.hardened.yml, kubernetes.yaml)"
    assert f"CRITICAL AG403 Privileged container  {fixed}" in result.stdout
    assert "0 findings, 1 suppressed" in result.stdout
    assert (
        f"hardened configuration written to {out} (5 files); read {out / 'SUMMARY.md'}"
        in result.stdout
    )
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == [
        ".agentguard-harden.json",
        "SUMMARY.md",
        "deps/install-line.txt",
        "docker-compose.hardened.yml",
        "docker-run.sh",
        "kubernetes.yaml",
    ]


def test_what_harden_cannot_fix_stays_active_and_exits_1(tmp_path: Path) -> None:
    result = harden_cli(
        FIXTURES / "AG212" / "fail" / "no-dockerignore", "--out", tmp_path / "o", "--format", "json"
    )
    assert result.exit_code == 1
    report = json_report(result)
    assert [(f["rule_id"], f["suppressed"]) for f in report["findings"]] == [("AG212", None)]
    harden = report["facts"]["harden"]
    assert harden["not_fixed"] == [
        {
            "rule_id": "AG212",
            "fingerprint": report["findings"][0]["fingerprint"],
            "why": "the build context is part of the build",
            "todo": "Add a .dockerignore that keeps docs, .env and keys out, or COPY only what the "
            "agent runs.",
            "choices": [],
        }
    ]
    assert harden["fixed"] == []
    assert harden["verification"] is None
    assert (harden["user"], harden["workdir"], harden["network"]) == (
        "10001:10001",
        "/work",
        "none",
    )


def test_a_second_run_removes_only_what_the_first_one_wrote(tmp_path: Path) -> None:
    out = tmp_path / "o"
    # AG305 is fixed; AG302 (Read, Edit: what the author declared) stays open, medium
    first = harden_cli(FIXTURES / "AG305" / "fail" / "py-bypass-in-repo", "--out", out)
    assert first.exit_code == 0
    assert (out / "agent" / "agent_hardened.py").is_file()
    (out / "notes.txt").write_text("mine\n")
    assert harden_cli(COMPOSE_CASE, "--out", out).exit_code == 0
    assert not (out / "agent" / "agent_hardened.py").exists()
    assert (out / "notes.txt").read_text() == "mine\n"
    recorded = json.loads((out / ".agentguard-harden.json").read_text())["files"]
    assert sorted(recorded) == [
        "SUMMARY.md",
        "deps/install-line.txt",
        "docker-compose.hardened.yml",
        "docker-run.sh",
        "kubernetes.yaml",
    ]
    # each with the digest of what harden wrote
    assert recorded["docker-run.sh"] == digest((out / "docker-run.sh").read_bytes())
