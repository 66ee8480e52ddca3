"""AG201-AG204 over image and container facts: fail fixtures give exactly these findings."""

from __future__ import annotations

import dataclasses

from agentguard.facts.host_paths import sensitive_reason
from agentguard.findings import Location
from agentguard.inspect.facts import MountFact
from agentguard.rules.inspected import check_container, check_image
from agentguard.rules.mounts import check_mounts, workdir_relation
from tests.rules.facts_loader import expect, layer_digest, load_container, load_image, only

L1 = layer_digest(1)


def test_ag201_project_copied_into_workdir_is_one_finding_for_the_layer() -> None:
    image = load_image("AG201", "fail")
    assert only("AG201", check_image(image, lock=None, watched=())) == [
        expect(
            "AG201",
            "critical",
            "The working directory /app of image agent:1 holds a project (document, env-file, "
            "key-file, manifest, vcs): .env, .git, deploy/key.pem, docs/plan-q3.md, "
            "pyproject.toml; added by layer 1 (COPY . /app # buildkit). The agent can read 2 "
            "secret file(s).",
            locations=[
                {"path": "/app/.env", "layer": L1},
                {"path": "/app/.git", "layer": L1},
                {"path": "/app/deploy/key.pem", "layer": L1},
            ],
            evidence={
                "image": "agent:1",
                "workdir": "/app",
                "layer": L1,
                "layer_index": 1,
                "created_by": "COPY . /app # buildkit",
                "categories": ["document", "env-file", "key-file", "manifest", "vcs"],
                "paths": [
                    "/app/.env",
                    "/app/.git",
                    "/app/deploy/key.pem",
                    "/app/docs/plan-q3.md",
                    "/app/pyproject.toml",
                ],
                "paths_total": 5,
                "listing_capped": False,
            },
            fix="Copy only what the agent needs to run into the image (a built wheel or the "
            "package folder), keep /app empty or a dedicated scratch folder, and add a "
            ".dockerignore that keeps .git, docs, .env and keys out of the build context.",
            snippet=".git\n*.md\ndocs/\n.env*\n*.pem\n*.key\n",
        )
    ]


def test_ag201_capped_listing_lowers_confidence_and_says_so() -> None:
    image = dataclasses.replace(load_image("AG201", "fail"), workdir_entries_truncated=True)
    [finding] = only("AG201", check_image(image, lock=None, watched=()))
    assert finding["confidence"] == "medium"
    assert finding["evidence"]["listing_capped"] is True
    assert finding["message"].endswith(
        "The listing of the working directory was capped; more may be there."
    )


def test_ag201_container_workdir_overrides_the_image_workdir() -> None:
    image = load_image("AG201", "fail")
    assert only("AG201", check_image(image, lock=None, watched=(), workdir="/srv")) == []


def test_ag201_pass_agent_code_and_manifest_only() -> None:
    assert only("AG201", check_image(load_image("AG201", "pass"), lock=None, watched=())) == []


def _fix202(source: str) -> str:
    return (
        f"Do not mount {source} into the agent's working directory: mount only what the agent "
        "needs, read-only, outside it, or use a named volume as scratch space."
    )


def _mount202(source: str, dest: str, relation: str, rw: bool, where: str) -> dict[str, object]:
    return expect(
        "AG202",
        "high",
        f"container agent-mounts mounts the host folder {source} {where} "
        f"({'writable' if rw else 'read-only'}); the agent reads it as its project.",
        locations=[{"path": dest, "note": f"container agent-mounts mount of {source}"}],
        evidence={
            "subject": "container agent-mounts",
            "source": source,
            "destination": dest,
            "workdir": "/app/agent",
            "relation": relation,
            "read_write": rw,
        },
        fix=_fix202(source),
        snippet="-v agent-scratch:/work -w /work",
    )


def test_ag202_bind_mounts_at_below_and_above_the_workdir() -> None:
    container = load_container("AG202", "fail")
    assert only("AG202", check_container(container)) == [
        _mount202(
            "/srv/all",
            "/app",
            "above",
            True,
            "at /app, which contains the working directory /app/agent",
        ),
        _mount202("/srv/proj", "/app/agent", "at", True, "at the working directory /app/agent"),
        _mount202(
            "/srv/docs",
            "/app/agent/docs",
            "below",
            False,
            "at /app/agent/docs, inside the working directory /app/agent",
        ),
    ]


def test_ag202_pass_volume_as_workdir_and_bind_elsewhere() -> None:
    assert only("AG202", check_container(load_container("AG202", "pass"))) == []


def test_ag202_unknown_workdir_reports_only_the_project_with_low_confidence() -> None:
    mounts = [
        MountFact("bind", "/srv/pgdata", "/var/lib/postgresql/data", True),
        MountFact("bind", "~/.gitconfig", "/root/.gitconfig", False),
        MountFact("bind", ".", "/app", True),
    ]
    [finding] = check_mounts(
        mounts,
        None,
        subject="service agent",
        locate=lambda m: Location(path="compose.yaml", line=7),
    )
    assert finding.rule_id == "AG202"
    assert finding.confidence.value == "low"
    assert finding.severity.value == "medium"  # an unknown is never graded as set
    assert (finding.evidence["source"], finding.evidence["relation"]) == (".", "unknown")
    assert finding.locations == (Location(path="compose.yaml", line=7),)


def _fix203(source: str) -> str:
    return (
        f"Remove the mount of {source}; if the agent must run containers, give it a separate "
        "rootless engine or an API proxy that allows only the calls it needs."
    )


def test_ag203_socket_and_socket_folder_mounted() -> None:
    container = load_container("AG203", "fail")
    assert only("AG203", check_container(container)) == [
        expect(
            "AG203",
            "critical",
            "container agent-socket mounts /run, the folder holding the Docker socket "
            "(/run -> /host-run): whoever reaches it is root on the host.",
            locations=[{"path": "/host-run", "note": "container agent-socket mount of /run"}],
            evidence={
                "subject": "container agent-socket",
                "source": "/run",
                "destination": "/host-run",
                "read_write": False,
                "via_folder": True,
            },
            fix=_fix203("/run"),
            confidence="medium",
        ),
        expect(
            "AG203",
            "critical",
            "container agent-socket mounts the Docker socket (/var/run/docker.sock -> "
            "/var/run/docker.sock): whoever reaches it is root on the host.",
            locations=[
                {
                    "path": "/var/run/docker.sock",
                    "note": "container agent-socket mount of /var/run/docker.sock",
                }
            ],
            evidence={
                "subject": "container agent-socket",
                "source": "/var/run/docker.sock",
                "destination": "/var/run/docker.sock",
                "read_write": True,
                "via_folder": False,
            },
            fix=_fix203("/var/run/docker.sock"),
        ),
    ]


def test_ag203_socket_file_inside_an_image() -> None:
    image = load_image("AG203", "fail")
    assert only("AG203", check_image(image, lock=None, watched=())) == [
        expect(
            "AG203",
            "medium",
            "Image agent:1 contains /var/run/docker.sock: it expects the Docker socket at that path.",
            locations=[{"path": "/var/run/docker.sock"}],
            evidence={"image": "agent:1", "path": "/var/run/docker.sock"},
            fix="Remove /var/run/docker.sock from the image and do not mount the engine's socket "
            "there.",
        )
    ]


def test_ag203_pass() -> None:
    assert only("AG203", check_container(load_container("AG203", "pass"))) == []
    assert only("AG203", check_image(load_image("AG203", "pass"), lock=None, watched=())) == []


def _mount204(source: str, dest: str, reason: str, rw: bool) -> dict[str, object]:
    return expect(
        "AG204",
        "high",
        f"container agent-sensitive mounts {source} ({reason}) at {dest} "
        f"({'writable' if rw else 'read-only'}).",
        locations=[{"path": dest, "note": f"container agent-sensitive mount of {source}"}],
        evidence={
            "subject": "container agent-sensitive",
            "source": source,
            "destination": dest,
            "reason": reason,
            "read_write": rw,
        },
        fix=f"Remove the mount of {source}; mount only the folder the agent needs, read-only, "
        "and pass credentials at run time as narrowly scoped secrets.",
    )


def test_ag204_root_etc_home_and_credential_folders() -> None:
    container = load_container("AG204", "fail")
    assert only("AG204", check_container(container)) == [
        _mount204("/Users/bob/.aws", "/aws", "credentials folder .aws", False),
        _mount204("/home/alice/.claude", "/claude", "credentials folder .claude", True),
        _mount204("/home/alice", "/home/agent", "home folder", True),
        _mount204("/", "/host", "the host's root filesystem", False),
        _mount204("/etc", "/host-etc", "system path /etc", False),
        _mount204("/home/alice/.ssh", "/root/.ssh", "credentials folder .ssh", False),
    ]


def test_ag204_pass_localtime_and_a_project_subfolder() -> None:
    assert only("AG204", check_container(load_container("AG204", "pass"))) == []


def test_workdir_relation_and_sensitive_reason_edges() -> None:
    assert workdir_relation("/app/", "/app") == "at"
    assert workdir_relation("/application", "/app") is None
    assert workdir_relation("/data", "/") == "below"
    assert sensitive_reason("~") == "home folder"
    assert sensitive_reason("/home/alice/.config/gcloud") == "credentials folder .config/gcloud"
    assert sensitive_reason("/etc/resolv.conf") is None
    assert sensitive_reason("/var/lib/docker/volumes/x") == "system path /var/lib/docker/volumes/x"
    assert sensitive_reason(None) is None


def test_ag201_not_reported_when_a_mount_hides_the_image_workdir() -> None:
    from agentguard.rules.inspected import workdir_hidden_by_mount

    image = load_image("AG201", "fail")
    covered = dataclasses.replace(
        load_container("AG202", "fail", image=image),
        workdir="/app",
        mounts=(MountFact("bind", "/srv/proj", "/app", True),),
    )
    beside = dataclasses.replace(covered, mounts=(MountFact("bind", "/srv/data", "/data", True),))
    assert workdir_hidden_by_mount(covered) is True
    assert workdir_hidden_by_mount(beside) is False
    hidden = check_image(image, lock=None, watched=(), workdir="/app", workdir_hidden=True)
    assert only("AG201", hidden) == []
    assert [f["rule_id"] for f in only("AG202", check_container(covered))] == ["AG202"]
