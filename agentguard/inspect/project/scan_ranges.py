"""How a scan's candidates are cut into ranges for its reading processes: each range a
sample of the whole walk, the costliest first."""

from __future__ import annotations

import os

from agentguard.inspect.project.walk import Candidate


def interleave(
    indexes: list[int], jobs: int, *, chunk: int, ranges_per_job: int
) -> tuple[list[int], list[tuple[int, int]]]:
    """``indexes`` reordered so that each of the returned ranges is a sample of the whole
    walk, and the ranges.

    Several ranges per worker, each made of blocks of neighbouring files taken from all
    over the walk: the walk keeps a folder's files together, and in an SDK's own repository
    one folder of tests can hold most of the parsing, which one contiguous range would
    give to one worker alone. (Neighbours stay together in a block: reading a tree in its
    own order costs less.)
    """
    if not indexes:
        return [], []
    count = min(len(indexes), max(jobs * ranges_per_job, -(-len(indexes) // chunk)))
    block = max(1, len(indexes) // (count * 4))  # four blocks or more per range
    blocks = [indexes[b : b + block] for b in range(0, len(indexes), block)]
    order: list[int] = []
    ranges: list[tuple[int, int]] = []
    for r in range(count):
        start = len(order)
        for taken in blocks[r::count]:
            order += taken
        ranges.append((start, len(order)))
    return order, ranges


# what a byte of each kind costs to read, relative to a byte of Python (parsed when it names
# an agent library); the others are searched, not parsed
_COST_PER_BYTE = {"python": 20, "ts": 4}


def costliest_first(cands: list[Candidate], ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The ranges, those with the most bytes to read first (Python's counting most): the
    processes end together, instead of one parsing a range of large test modules taken
    last while the other waits. (One ``lstat`` per file: a few milliseconds.)"""
    sizes = []
    for cand in cands:
        try:
            size = os.lstat(cand.abspath).st_size
        except OSError:
            size = 0
        sizes.append(size * _COST_PER_BYTE.get(cand.kind, 1))
    return sorted(ranges, key=lambda r: -sum(sizes[r[0] : r[1]]))
