"""A JSON page parsed with the places of its files (agentguard.lock.page_spans): the same
values as ``json.loads``, places that give back each file, and None for anything else."""

from __future__ import annotations

import json
import random

import pytest

from agentguard.lock.page_spans import parse


def _page(rng: random.Random) -> dict[str, object]:
    files: list[object] = []
    for n in range(rng.randint(0, 40)):
        item: dict[str, object] = {
            "filename": f"mcp-{n}.0.{rng.randint(0, 9)}-py3-none-any.whl",
            "hashes": {"sha256": f"{rng.getrandbits(256):064x}"},
            "yanked": rng.choice([False, True, 'a "reason" with {braces} [and] \\ escapes']),
            "core-metadata": rng.choice([False, {"sha256": "ab" * 32}]),
            "size": rng.randint(0, 10**9),
            "upload-time": "2025-01-01T00:00:00.000000Z",
        }
        files.append(item if rng.random() > 0.05 else rng.choice([None, 3, "x", [1, {"a": 2}]]))
    page: dict[str, object] = {"meta": {"api-version": "1.1"}, "name": "mcp", "files": files}
    page["versions"] = sorted(
        {str(f["filename"]).split("-")[1] for f in files if isinstance(f, dict)}
    )
    keys = list(page)
    rng.shuffle(keys)
    return {k: page[k] for k in keys}


@pytest.mark.parametrize("seed", range(30))
def test_the_same_values_as_json_loads_and_places_that_give_back_each_file(seed: int) -> None:
    rng = random.Random(seed)
    page = _page(rng)
    for text in (
        json.dumps(page),
        json.dumps(page, indent=rng.choice([1, 2, 4])),
        json.dumps(page, separators=(",", ":")),
        " \n\t" + json.dumps(page) + "\r\n ",
    ):
        body = text.encode()
        got = parse(body)
        assert got is not None
        data, spans = got
        assert data == json.loads(body)
        assert [json.loads(body[a:b]) for a, b in spans] == data["files"]


def test_a_key_given_twice_is_read_as_json_loads_reads_it() -> None:
    body = b'{"files": [{"filename": "a-1.0.tar.gz"}], "files": [{"filename": "b-2.0.tar.gz"}]}'
    got = parse(body)
    assert got is not None
    data, spans = got
    assert data == json.loads(body) == {"files": [{"filename": "b-2.0.tar.gz"}]}
    assert [body[a:b] for a, b in spans] == [b'{"filename": "b-2.0.tar.gz"}']
    # the last "files" not a list: no places (json.loads keeps the string)
    assert parse(b'{"files": [{"filename": "a-1.0.tar.gz"}], "files": "none"}') is None


@pytest.mark.parametrize(
    "body",
    [
        '{"files": [{"filename": "caf\u00e9-1.0.tar.gz"}]}'.encode(),  # not ASCII
        b"\xef\xbb\xbf" + b'{"files": []}',  # a byte-order mark
        b'[{"filename": "a-1.0.tar.gz"}]',  # not an object
        b"{}",
        b'{"name": "mcp"}',  # no files
        b'{"files": [{"filename": "a-1.0.tar.gz"}',  # cut short
        b'{"files": [1 2]}',
        b'{"files": []} trailing',
        b'{"files": [' + b"[" * 100_000 + b"]" * 100_000 + b"]}",  # nested without end
        b"",
        b"not json",
    ],
)
def test_anything_else_is_left_to_json_loads(body: bytes) -> None:
    assert parse(body) is None
