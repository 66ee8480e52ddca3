"""OpenHands starts its sandbox itself from `[sandbox] volumes` in its config.toml: the run
files harden writes do not start it, so harden never claims AG203/AG204 there fixed."""

from __future__ import annotations

from pathlib import Path

from tests.harden.support import claimed_ids, harden_folder


def test_sandbox_volumes_stay_open_with_what_to_change(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "config.toml").write_text(
        '[core]\nruntime = "docker"\n\n[sandbox]\nvolumes = "/var/run/docker.sock:'
        '/var/run/docker.sock,~/.aws:/home/openhands/.aws:ro"\n'
    )
    result = harden_folder(project, tmp_path / "out")
    assert claimed_ids(result.plan) & {"AG203", "AG204"} == set()
    assert sorted((o.finding.rule_id, o.why, o.todo) for o in result.plan.opens) == [
        (
            rule,
            "OpenHands starts its sandbox itself with these volumes; no file written here starts it",
            "Remove the entry from `[sandbox] volumes` in the config.toml.",
        )
        for rule in ("AG203", "AG204")
    ]
