"""The probe's output reader and the AG501 verdicts, offline: what each observation means,
and that a probe which saw nothing is "unknown", never "held"."""

from __future__ import annotations

from pathlib import Path

from agentguard.harden.probe_facts import (
    HELPER_PATH,
    Expected,
    Inside,
    MountInfo,
    Observation,
    Outside,
    parse_mountinfo_line,
    parse_probe_output,
)
from agentguard.harden.verify import is_static_elf
from agentguard.inspect.facts import MountFact
from agentguard.rules.runtime import check_observation

# what the probe printed in a hardened container (trimmed /proc/self/mountinfo)
SAMPLE = """\
AGP begin
AGP status Uid:\t10001\t10001\t10001\t10001
AGP status Gid:\t10001\t10001\t10001\t10001
AGP status CapPrm:\t0000000000000000
AGP status CapEff:\t0000000000000000
AGP status NoNewPrivs:\t1
AGP cwd /work
AGP rootfs denied
AGP mount 69 45 254:0 /data/vfs/dir/fae6 / ro,relatime master:1 - ext4 /dev/vda rw
AGP mount 70 69 0:40 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw
AGP mount 86 69 0:46 / /tmp rw,nosuid,nodev,noexec,relatime - tmpfs tmpfs rw,size=65536k
AGP mount 87 69 0:47 / /work rw,nosuid,nodev,relatime - tmpfs tmpfs rw,size=65536k,mode=700
AGP mount 88 69 254:0 /usr/bin/busybox /.agentguard-probe/busybox ro,relatime - ext4 /dev/vda rw
AGP mount 89 69 254:0 /c/resolv.conf /etc/resolv.conf ro,relatime - ext4 /dev/vda rw
AGP net Inter-|   Receive
AGP net  face |bytes    packets errs drop fifo frame compressed multicast|bytes
AGP net     lo:       0       0    0    0    0     0          0         0        0
AGP end
"""
EXPECTED = Expected(
    workdir="/work",
    network="none",
    tmpfs=("/work", "/tmp"),
    allowed=(),
    volumes=(),
    helper=HELPER_PATH,
)
OUTSIDE = Outside(
    user="10001:10001",
    read_only_rootfs=True,
    network_mode="none",
    networks=("none",),
    mounts=(MountFact("bind", "/usr/bin/busybox", HELPER_PATH, False),),
    cap_add=(),
    cap_drop=("ALL",),
    privileged=False,
    security_opt=("no-new-privileges:true",),
    workdir="/work",
)


def test_the_probe_output_reads_into_facts() -> None:
    inside = parse_probe_output(SAMPLE.splitlines())
    assert inside == Inside(
        uids=(10001, 10001, 10001, 10001),
        gids=(10001, 10001, 10001, 10001),
        cap_eff="0000000000000000",
        cap_prm="0000000000000000",
        no_new_privs="1",
        cwd="/work",
        entries=(),
        rootfs="denied",
        mounts=inside.mounts,
        interfaces=("lo",),
        complete=True,
    )
    assert inside.mounts is not None
    assert [m.mountpoint for m in inside.mounts] == [
        "/", "/proc", "/tmp", "/work", HELPER_PATH, "/etc/resolv.conf",
    ]  # fmt: skip
    assert inside.mounts[0] == MountInfo("/", "/data/vfs/dir/fae6", "ext4", ("ro", "relatime"))


def test_an_escaped_mount_point_and_a_garbled_line() -> None:
    m = parse_mountinfo_line("90 69 254:0 /srv/my\\040docs /data ro - ext4 /dev/vda rw")
    assert m == MountInfo("/data", "/srv/my docs", "ext4", ("ro",))
    assert parse_mountinfo_line("not a mountinfo line") is None


def test_a_probe_cut_short_lists_nothing_as_seen() -> None:
    inside = parse_probe_output(SAMPLE.split("AGP mount")[0].splitlines())
    assert (inside.complete, inside.entries, inside.mounts, inside.interfaces) == (
        False,
        None,
        None,
        None,
    )


def _obs(inside: Inside | None, outside: Outside | None, why: str | None = None) -> Observation:
    return Observation("c0ffee" * 10, "agent:1", "docker-run.sh", inside, outside, why)


def test_a_hardened_container_holds_on_every_probe() -> None:
    verdicts = check_observation(_obs(parse_probe_output(SAMPLE.splitlines()), OUTSIDE), EXPECTED)
    assert [(v.probe, v.status) for v in verdicts] == [
        ("user", "held"),
        ("working-directory", "held"),
        ("root-filesystem", "held"),
        ("capabilities", "held"),
        ("no-new-privileges", "held"),
        ("mounts", "held"),
        ("docker-socket", "held"),
        ("network", "held"),
    ]
    assert all(v.finding is None for v in verdicts)


def test_nothing_seen_is_unknown_never_held() -> None:
    verdicts = check_observation(_obs(None, None, "no probe inside: no busybox on PATH"), EXPECTED)
    assert {(v.status, v.detail) for v in verdicts} == {
        ("unknown", "not verified: no probe inside: no busybox on PATH")
    }


def test_from_outside_only_what_the_engine_record_shows_is_verified() -> None:
    verdicts = check_observation(_obs(None, OUTSIDE, "no probe inside: x"), EXPECTED)
    assert {v.probe: v.status for v in verdicts} == {
        "user": "unknown",
        "working-directory": "unknown",
        "root-filesystem": "held",
        "capabilities": "unknown",
        "no-new-privileges": "unknown",
        "mounts": "held",
        "docker-socket": "held",
        "network": "held",
    }


def test_root_with_capabilities_and_a_writable_root_each_fail_their_probe() -> None:
    text = (
        SAMPLE.replace("10001\t10001\t10001\t10001", "0\t0\t0\t0")
        .replace("CapEff:\t0000000000000000", "CapEff:\t00000000a80425fb")
        .replace("NoNewPrivs:\t1", "NoNewPrivs:\t0")
        .replace("AGP rootfs denied", "AGP rootfs writable")
    )
    verdicts = check_observation(_obs(parse_probe_output(text.splitlines()), OUTSIDE), EXPECTED)
    violated = {v.probe: v.detail for v in verdicts if v.status == "violated"}
    assert violated == {
        "user": "the process runs with uids (0, 0, 0, 0) and gids (0, 0, 0, 0) (0 is root)",
        "root-filesystem": "a file could be written to / inside the container",
        "capabilities": "CapEff 00000000a80425fb, CapPrm 0000000000000000: capabilities are effective",
        "no-new-privileges": "NoNewPrivs is 0: setuid programs can raise privileges",
    }
    assert {v.finding.rule_id for v in verdicts if v.finding} == {"AG501"}


def test_the_helper_must_be_static(tmp_path: Path) -> None:
    import shutil

    busybox = shutil.which("busybox")
    assert busybox is not None
    assert is_static_elf(Path(busybox)) is True
    assert is_static_elf(Path("/bin/ls")) is False
    (tmp_path / "script").write_text("#!/bin/sh\n")
    assert is_static_elf(tmp_path / "script") is False
