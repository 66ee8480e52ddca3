"""The safe open and the safe write, one promise each."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from agentguard import safeio


def test_a_link_inside_the_root_is_read_and_one_out_of_it_is_not(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "real.txt").write_text("in")
    (tmp_path / "secret").write_text("out")
    (root / "inside").symlink_to(root / "sub" / "real.txt")
    (root / "outside").symlink_to(tmp_path / "secret")

    assert safeio.read_text(root / "inside", root=root) == "in"
    with pytest.raises(safeio.LinkOut):
        safeio.read_text(root / "outside", root=root)
    (root / "top.txt").write_text("top")
    (root / "sub" / "up").symlink_to(root / "top.txt")
    assert safeio.read_text(root / "sub" / "up", root=root) == "top"
    with pytest.raises(safeio.LinkOut):  # default root: the file's own folder
        safeio.read_text(root / "sub" / "up")


def test_only_regular_files_are_read_and_each_read_is_capped(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "big").write_bytes(b"x" * 101)

    with pytest.raises(safeio.NotRegular):
        safeio.read_bytes(tmp_path / "fifo")
    with pytest.raises(safeio.TooLarge) as exc:
        safeio.read_bytes(tmp_path / "big", cap=100)
    assert exc.value.size == 101 and str(exc.value) == "101 bytes, over the 100 byte cap: not read"


def test_write_output_refuses_a_link_and_replaces_a_file_atomically(tmp_path: Path) -> None:
    (tmp_path / "victim").write_text("keep")
    (tmp_path / "out").symlink_to(tmp_path / "victim")
    with pytest.raises(safeio.UnsafeWrite):
        safeio.write_output(tmp_path / "out", "x")
    assert (tmp_path / "victim").read_text() == "keep"

    (tmp_path / "report").write_text("old")
    safeio.write_output(tmp_path / "report", "new", 0o600)
    assert (tmp_path / "report").read_text() == "new"
    assert (tmp_path / "report").stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "report", "victim"]


@pytest.mark.parametrize("name", ["/etc/passwd", "../x", "a/../../x", "", "a\x00b"])
def test_names_that_leave_the_folder_are_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(safeio.UnsafeWrite):
        safeio.write_in(tmp_path, name, "x")
    assert not safeio.remove_in(tmp_path, name)


def test_write_in_never_goes_down_a_link(tmp_path: Path) -> None:
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    out.mkdir()
    elsewhere.mkdir()
    (out / "agent").symlink_to(elsewhere, target_is_directory=True)

    with pytest.raises(safeio.UnsafeWrite):
        safeio.write_in(out, "agent/x.sh", "x")
    assert list(elsewhere.iterdir()) == []
    assert safeio.write_in(out, "deps/c.txt", "x").read_text() == "x"


def test_an_output_that_is_a_device_is_written_to_not_replaced(tmp_path: Path) -> None:
    """`--output /dev/null`: the report goes into the device; the device stays (a run as
    root used to rename a regular file over it, for every process on the machine)."""
    device = tmp_path / "null"
    try:  # a null device of the test's own (root), else the machine's (a rename would fail)
        os.mknod(device, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except PermissionError:
        device = Path(os.devnull)
    before = os.stat(device)
    safeio.write_output(device, "report\n" * 1000)
    after = os.stat(device)
    assert stat.S_ISCHR(after.st_mode)
    assert (after.st_rdev, after.st_ino) == (before.st_rdev, before.st_ino)
    assert not [n for n in os.listdir(device.parent) if "agentguard" in n]
