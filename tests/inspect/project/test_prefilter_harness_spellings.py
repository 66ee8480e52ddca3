"""The Docker harness pre-filters (python_prefilter.CONTAINER_START and the Docker import
of the first stage, python_harness.may_start_containers for the second) against spellings
of the import and of the container start that Python reads and the harness reader
matches: a file either test rules out is counted and never parsed, and each test reads a
file in time linear in its length."""

from __future__ import annotations

import time

import pytest

from agentguard.inspect.project.python_prefilter import python_may_matter, python_risk_may_matter
from tests.inspect.project.prefilter_support import HARNESS, read_whole


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # grouping brackets leave no node: `(x.containers).run` is the Attribute chain
        # `x.containers.run`, with `)` between `containers` and the dot
        pytest.param(b"client.containers.run(", b"(client.containers).run(", id="parenthesised"),
        pytest.param(
            b"client.containers.run(", b"(client.containers\n    ).run(", id="bracket-line-end"
        ),
    ],
)
def test_a_container_start_in_grouping_brackets_is_read(old: bytes, new: bytes) -> None:
    """agbench's harness with its start's owner in brackets: both stages took
    `containers`, blanks, then a dot or a comment, for the only spellings."""
    original = HARNESS.read_bytes()
    assert original.count(old) == 1
    source = original.replace(old, new)
    got = read_whole("run_cmd.py", source)
    assert got.harnesses  # (the full reading finds it; read_whole: the second stage too)
    assert python_may_matter(source) and python_risk_may_matter(source)


@pytest.mark.parametrize(
    "imported",
    [
        pytest.param(b"import\x0cdocker\n", id="import-form-feed"),
        pytest.param(b"import \\\n    docker\n", id="import-continuation"),
        pytest.param(b"import os, \\\n    docker\n", id="import-list-continuation"),
        pytest.param(b"import os,\x0cdocker\n", id="import-list-form-feed"),
    ],
)
def test_an_import_of_docker_spelled_as_python_reads_it_passes_the_first_stage(
    imported: bytes,
) -> None:
    """An import statement of the Docker SDK with a form feed or a backslash continuation
    where the test takes only spaces and tabs (Python reads both as blanks between
    tokens): the first stage said no, and the file was counted and never parsed."""
    original = HARNESS.read_bytes()
    assert original.count(b"import docker\n") == 1
    source = original.replace(b"import docker\n", imported)
    assert read_whole("run_cmd.py", source).harnesses
    assert python_may_matter(source) and python_risk_may_matter(source)


def test_a_from_import_of_docker_with_a_form_feed_or_continuation_passes() -> None:
    source = b'from\x0cdocker import from_env\nfrom_env().containers.run(i, "python x.py")\n'
    assert read_whole("run.py", source).harnesses
    assert python_may_matter(source)
    source = b'from \\\n docker import from_env\nfrom_env().containers.run(i, "python x.py")\n'
    assert read_whole("run.py", source).harnesses
    assert python_may_matter(source)


def test_the_import_test_is_linear_in_a_list_of_empty_names() -> None:
    """`import a` then `,  ` sixteen times (50 bytes): the import pattern's name list
    (`[\\w. \\t]*,[ \\t]*` repeated) splits each run of blanks between a comma and the
    next in as many ways as it is long, and tries them all before it fails: 3 s at 16
    commas, 29 s at 18 (exponential), before any parse; the first stage runs it on every
    Python file (the Docker import and the agent modules' alike)."""
    source = b"# import a" + b",  " * 16 + b"x\n"
    started = time.perf_counter()
    python_may_matter(source)
    assert time.perf_counter() - started < 1.0
