"""Property: whatever the bytes, the reader returns an ImageRead (it never raises), and a
damaged image is never reported complete with facts that differ from the intact image's."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentguard.inspect.image import read_image_archive, read_image_stream
from tests.inspect.image.tarballs import (
    Oci,
    OneWay,
    d,
    docker_save,
    f,
    layer,
    metadata,
    tar_members,
)

SAVED = docker_save(
    [
        layer([d("app"), f("app/CLAUDE.md", "notes"), f("app/x.py", "x = 1")]),
        layer(
            [
                f("app/.wh.x.py"),
                f("usr/lib/python3/site-packages/a-1.dist-info/METADATA", metadata("a", "1")),
            ]
        ),
    ],
    compression=["gzip", "none"],
    order="lexical",
)
_oci = Oci()
_oci.image(
    [layer([d("app"), f("app/.mcp.json", "{}")])],
    ["zstd"],
    platform={"os": "linux", "architecture": "amd64"},
)
OCI_TAR = tar_members(sorted(_oci.finish().items()))

mutations = st.lists(
    st.tuples(st.integers(min_value=0), st.integers(min_value=0, max_value=255)),
    min_size=1,
    max_size=8,
)


def mutate(data: bytes, changes: list[tuple[int, int]], cut: int | None) -> bytes:
    buf = bytearray(data)
    for at, value in changes:
        buf[at % len(buf)] = value
    return bytes(buf[: cut % len(buf)] if cut is not None else buf)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(changes=mutations, cut=st.none() | st.integers(min_value=0), oci=st.booleans())
def test_damaged_bytes_never_raise_and_never_pass_as_the_original(
    tmp_path: Path, changes: list[tuple[int, int]], cut: int | None, oci: bool
) -> None:
    original = OCI_TAR if oci else SAVED.tar
    data = mutate(original, changes, cut)
    path = tmp_path / "m.tar"
    path.write_bytes(data)
    intact = path.with_suffix(".ok")
    intact.write_bytes(original)
    good = read_image_archive(intact, target="m")
    for read in (
        read_image_archive(path, target="m"),
        read_image_stream(OneWay(data, 3000), target="m"),  # type: ignore[arg-type]
    ):
        if read.complete:
            # Everything the facts hold comes from digest-checked bytes: a change that leaves
            # every source ok touched only unused fields (mtime, uname, padding, tags).
            assert read.facts == good.facts
