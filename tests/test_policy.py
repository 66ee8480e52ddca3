"""Applying a configuration to findings: disable, severity remap, ignores, inline comments."""

from __future__ import annotations

from pathlib import Path

from agentguard.config import load_config
from agentguard.findings import Finding, Location, Severity, Source, SourceStatus
from agentguard.policy import apply_policy, glob_to_regex, inline_rules
from agentguard.rules.hardening import RunsAsRoot, WritableRootFilesystem
from agentguard.rules.mounts import DockerSocketExposed, ProjectInImageWorkdir

DOCKERFILE = """\
FROM scratch
# agentguard: ignore[AG401]
USER root
COPY . /app  # agentguard: ignore[AG201, AG406]
RUN true  # agentguard: ignore[AG201, AG406]
WORKDIR /app
"""
COMPOSE = """\
services:
  agent:
    image: agent:1
    volumes:
      - /var/run/docker.sock:/var/run/docker.sock
"""


def project(tmp_path: Path, config: str = "") -> Path:
    (tmp_path / "Dockerfile").write_text(DOCKERFILE)
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "compose.yaml").write_text(COMPOSE)
    (tmp_path / "agentguard.toml").write_text(config)
    return tmp_path


def root_user(path: str, line: int | None) -> Finding:
    return RunsAsRoot.finding(
        "The image runs as root (USER root).",
        locations=[Location(path=path, line=line)],
        fix="Add `USER 10001` after the last RUN.",
        evidence={"user": "root"},
    ).with_context("production")


def copy_all(line: int = 4) -> Finding:
    return ProjectInImageWorkdir.finding(
        "COPY . /app puts the project into the working directory.",
        locations=[Location(path="Dockerfile", line=line)],
        fix="Copy only the built package.",
        evidence={"instruction": "COPY . /app"},
    ).with_context("production")


def socket(path: str = "deploy/compose.yaml", line: int = 5) -> Finding:
    return DockerSocketExposed.finding(
        "Service agent mounts /var/run/docker.sock.",
        locations=[Location(path=path, line=line)],
        fix="Remove the socket mount.",
        evidence={"service": "agent", "source": "/var/run/docker.sock"},
    ).with_context("production")


def writable_root() -> Finding:
    return WritableRootFilesystem.finding(
        "Service agent has a writable root filesystem.",
        locations=[Location(path="deploy/compose.yaml", line=2)],
        fix="Set `read_only: true`.",
    ).with_context("production")


def test_disabled_rules_are_dropped_and_said_so(tmp_path: Path) -> None:
    root = project(tmp_path, 'disable = ["AG203"]\n')
    applied = apply_policy([socket(), writable_root()], load_config(root), root=root)
    assert applied.findings == (writable_root(),)
    assert applied.notes == ("config: AG203 is disabled (1 finding(s) not reported)",)


def test_severity_remap_changes_the_grade_but_never_raises_an_info_verdict(
    tmp_path: Path,
) -> None:
    root = project(tmp_path, '[severity]\nAG203 = "medium"\nAG406 = "high"\n')
    info = writable_root().with_severity(Severity.INFO)
    applied = apply_policy([socket(), writable_root(), info], load_config(root), root=root)
    assert applied.findings == (
        socket().with_severity(Severity.MEDIUM),
        writable_root().with_severity(Severity.HIGH),
        info,
    )
    assert applied.notes == (
        "config: AG203 severity set to medium (1 finding(s))",
        "config: AG406 severity set to high (1 finding(s))",
    )
    # the fingerprint does not depend on the severity: a remap keeps baselines valid
    assert applied.findings[0].fingerprint() == socket().fingerprint()


def test_config_ignore_by_glob_and_by_path_line(tmp_path: Path) -> None:
    root = project(tmp_path, '[ignore]\nAG203 = ["deploy/*.yaml:5"]\n"*" = ["legacy/"]\n')
    cfg = load_config(root)
    other_line = socket(line=9)
    legacy = root_user("legacy/Dockerfile", 1)
    applied = apply_policy([socket(), other_line, legacy], cfg, root=root)
    origin = root / "agentguard.toml"
    assert applied.findings == (
        socket().with_suppression(f"config: {origin}: ignore.AG203 = 'deploy/*.yaml:5'"),
        other_line,
        legacy.with_suppression(f"config: {origin}: ignore.* = 'legacy/'"),
    )


def test_inline_comment_on_the_line_or_the_comment_line_above(tmp_path: Path) -> None:
    root = project(tmp_path)
    applied = apply_policy(
        [root_user("Dockerfile", 3), copy_all(4), root_user("Dockerfile", 5), copy_all(5)],
        load_config(root),
        root=root,
    )
    assert applied.findings == (
        root_user("Dockerfile", 3).with_suppression("inline: Dockerfile:2"),
        # a `#` in a COPY line is an argument to COPY (Docker's rule), not a comment
        copy_all(4),
        # a shell comment in a RUN line is one, for AG201/AG406 only: AG401 is not covered
        root_user("Dockerfile", 5),
        copy_all(5).with_suppression("inline: Dockerfile:5"),
    )
    assert applied.sources == (Source.ok("file", "Dockerfile", "read for inline suppressions"),)


def test_inline_comment_of_another_rule_does_not_suppress(tmp_path: Path) -> None:
    root = project(tmp_path)
    finding = root_user("Dockerfile", 4)  # line 4 names AG201 and AG406, not AG401
    assert apply_policy([finding], load_config(root), root=root).findings == (finding,)


def test_inline_comment_in_jsonc(tmp_path: Path) -> None:
    (tmp_path / ".devcontainer").mkdir()
    (tmp_path / ".devcontainer" / "devcontainer.json").write_text(
        '{\n  // agentguard: ignore[AG203]\n  "mounts": ["source=/var/run/docker.sock"]\n}\n'
    )
    finding = socket(".devcontainer/devcontainer.json", 3)
    applied = apply_policy([finding], load_config(tmp_path), root=tmp_path)
    expected = finding.with_suppression("inline: .devcontainer/devcontainer.json:2")
    assert applied.findings == (expected,)


def test_paths_inside_images_are_not_read_from_the_host(tmp_path: Path) -> None:
    root = project(tmp_path)
    in_image = RunsAsRoot.finding(
        "The image runs as root.",
        locations=[Location(path="Dockerfile", line=3, layer="sha256:" + "a" * 64)],
        fix="Add `USER 10001`.",
    ).with_context("production")
    applied = apply_policy([in_image], load_config(root), root=root)
    assert applied.findings == (in_image,)
    assert applied.sources == ()


def test_a_file_too_large_to_read_is_a_skipped_source_and_the_finding_stays(
    tmp_path: Path,
) -> None:
    big = tmp_path / "big.py"
    big.write_bytes(b"# agentguard: ignore[AG401]\n" + b"x = 1\n" * 800_000)
    finding = root_user("big.py", 2)
    applied = apply_policy([finding], load_config(tmp_path), root=tmp_path)
    assert applied.findings == (finding,)
    assert applied.sources == (
        Source(
            "file",
            "big.py",
            SourceStatus.SKIPPED,
            "larger than 4194304 bytes: inline suppressions in it were not read",
        ),
    )


def test_inline_rules_and_globs() -> None:
    assert inline_rules("x = 1  # agentguard: ignore[AG301,ag302 , AG303]") == {
        "AG301",
        "AG302",
        "AG303",
    }
    assert inline_rules("# agentguard: ignore") == set()
    assert glob_to_regex("**/*.yaml").match("a/b/c.yaml")
    assert glob_to_regex("**/*.yaml").match("c.yaml")
    assert not glob_to_regex("*.yaml").match("a/c.yaml")
    assert glob_to_regex("src/?.py").match("src/a.py")


def test_inline_comments_are_read_only_from_regular_files_inside_the_project(
    tmp_path: Path,
) -> None:
    """A link inside the project to a file inside it is read (once it is resolved); a link
    out of it, a path outside it, a folder or a FIFO under the finding's name are not."""
    import os

    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "Dockerfile").write_text(DOCKERFILE)
    (tmp_path / "project").mkdir()
    root = project(tmp_path / "project")
    (root / "linked").symlink_to(root / "Dockerfile")  # inside: read
    (root / "out").symlink_to(outside / "Dockerfile")  # outside: never read
    (root / "folder").mkdir()
    os.mkfifo(root / "fifo")
    findings = [
        root_user("linked", 3),
        root_user("out", 3),
        root_user(str(outside / "Dockerfile"), 3),
        root_user("folder", 3),
        root_user("fifo", 3),
        root_user(str(root / "Dockerfile"), 3),
    ]
    applied = apply_policy(findings, load_config(root), root=root)
    assert applied.findings == (
        root_user("linked", 3).with_suppression("inline: linked:2"),
        *findings[1:5],
        root_user(str(root / "Dockerfile"), 3).with_suppression(f"inline: {root}/Dockerfile:2"),
    )
    assert applied.sources == (
        Source.ok("file", "linked", "read for inline suppressions"),
        Source.ok("file", str(root / "Dockerfile"), "read for inline suppressions"),
    )


def test_a_file_that_never_spells_the_marker_is_not_tokenized(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # openai-agents-python: 75 large test modules with findings, none with a suppression;
    # tokenizing each for its comments was most of the policy's time
    import agentguard.policy as policy

    root = project(tmp_path)
    (root / "Dockerfile").write_text(DOCKERFILE.replace("agentguard: ignore", "noqa: ignore"))
    read: list[str] = []
    real = policy.comments
    monkeypatch.setattr(
        policy, "comments", lambda name, text: read.append(name) or real(name, text)
    )
    applied = apply_policy([root_user("Dockerfile", 3)], load_config(root), root=root)
    assert applied.findings == (root_user("Dockerfile", 3),)
    assert applied.sources == (Source.ok("file", "Dockerfile", "read for inline suppressions"),)
    assert read == []
    # a marker in any case is read as before
    (root / "Dockerfile").write_text(DOCKERFILE.replace("agentguard:", "AgentGuard:"))
    applied = apply_policy([root_user("Dockerfile", 3)], load_config(root), root=root)
    assert applied.findings == (
        root_user("Dockerfile", 3).with_suppression("inline: Dockerfile:2"),
    )
    assert read == ["Dockerfile"]


def test_the_marker_is_found_in_the_bytes_as_in_the_decoded_text_ignoring_case() -> None:
    """The byte test stands for a search of the decoded text ignoring case: the same answer
    on mixed case, broken and multi-byte UTF-8 around and inside the word, and on random
    bytes."""
    import random
    import re

    from agentguard.policy import _spells_marker

    def by_text(data: bytes) -> bool:
        return re.search("agentguard", data.decode("utf-8", "replace"), re.IGNORECASE) is not None

    crafted = [
        b"# AgentGuard: ignore[AG301]",
        b"# AGENTGUARD",
        b"agent\xc3\xa9guard",  # (an accented letter inside: no)
        b"agentguar\xffd",
        b"\xe2\x80\x8bagentguard",  # (after a zero-width space: yes)
        "".join(chr(0xFF00 + ord(c) - 0x20) for c in "agentguard").encode(),  # (fullwidth)
        "agentguarD\u0130".encode(),
        b"agentgu\xc3ard",
        b"",
    ]
    rng = random.Random(20261207)
    letters = b"agentguardAGENTGUARD\xc3\xa9\xff\x80 "
    crafted += [bytes(rng.choice(letters) for _ in range(rng.randrange(40))) for _ in range(3000)]
    crafted += [b"x" * rng.randrange(3) + b"aGeNtGuArD"[: rng.randrange(11)] for _ in range(200)]
    for data in crafted:
        assert _spells_marker(data) == by_text(data), data
    assert any(_spells_marker(d) for d in crafted) and not all(_spells_marker(d) for d in crafted)
