"""Which indexes a run may contact: the user's side only (flag, uv's and pip's environment,
the resolver's default, AGENTGUARD_INDEX_HOSTS), never a file under review."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agentguard.lock import backend
from agentguard.lock import configured as cf

_ENV = (
    "UV_DEFAULT_INDEX",
    "UV_INDEX_URL",
    "UV_INDEX",
    "UV_EXTRA_INDEX_URL",
    "PIP_INDEX_URL",
    "PIP_EXTRA_INDEX_URL",
    "AGENTGUARD_INDEX_HOSTS",
)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    for name in _ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AGENTGUARD_CACHE_DIR", str(tmp_path / "cache"))
    cf._resolver_default.cache_clear()
    yield
    # (a test's made-up default index must not outlive it: kept in the process's cache under
    # the real environment's key, it made a later test's pypi.org pins "unconfigured")
    cf._resolver_default.cache_clear()


def test_the_flag_comes_first_and_uv_extras_still_count(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UV_DEFAULT_INDEX", "https://env.example/simple")
    monkeypatch.setenv("UV_INDEX", "corp=https://corp.example/simple https://more.example/simple")
    assert cf.configured("https://flag.example/simple").urls == (
        "https://flag.example/simple",
        "https://corp.example/simple",
        "https://more.example/simple",
    )
    assert cf.configured().urls == (
        "https://env.example/simple",
        "https://corp.example/simple",
        "https://more.example/simple",
    )


def test_pip_tools_reads_pips_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UV_DEFAULT_INDEX", "https://uv.example/simple")
    monkeypatch.setenv("PIP_INDEX_URL", "https://pip.example/simple")
    monkeypatch.setenv("PIP_EXTRA_INDEX_URL", "https://pip-extra.example/simple")
    assert cf.configured(backend="pip-tools").urls == (
        "https://pip.example/simple",
        "https://pip-extra.example/simple",
    )


def test_the_resolver_default_is_asked_once_then_read_from_the_cache(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: list[int] = []

    def default() -> tuple[str, ...]:
        asked.append(1)
        return ("https://default.example/simple",)

    monkeypatch.setattr(backend, "default_index_urls", default)
    assert cf.configured().urls == ("https://default.example/simple",)
    cf._resolver_default.cache_clear()  # a new process: only the cache file is left
    assert cf.configured().urls == ("https://default.example/simple",)
    assert asked == [1]
    monkeypatch.setenv("UV_INDEX", "https://extra.example/simple")  # another environment
    assert cf.configured().urls == (
        "https://default.example/simple",
        "https://extra.example/simple",
    )
    assert asked == [1, 1]


def test_a_resolver_default_that_could_not_be_asked_is_asked_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """uv asked under load (CI, two test workers) once failed; that empty answer was kept
    for the process, and every later lock in it read pypi.org pins as from an index nobody
    configured (AG107 in place of AG101 and AG105). A failure is now never kept."""
    answers: list[tuple[str, ...] | None] = [None, ("https://default.example/simple",)]

    def default() -> tuple[str, ...]:
        got = answers.pop(0)
        if got is None:
            raise backend.ResolverError("uv timed out", code="resolver-failed", retryable=True)
        return got

    monkeypatch.setattr(backend, "default_index_urls", default)
    assert cf.configured().urls == ()  # (that run: not known)
    assert cf.configured().urls == ("https://default.example/simple",)


@pytest.mark.parametrize(
    ("url", "allowed"),
    [
        ("https://corp.example/simple", True),
        ("https://corp.example/simple/", True),
        ("HTTPS://CORP.example/simple", True),
        ("https://bot:pw@corp.example/simple", True),  # a login is not part of the index
        ("https://corp.example/other", False),  # another index on the same host
        ("https://corp.example:8443/simple", False),
        ("http://corp.example/simple", False),
        ("https://evil.example/simple", False),
        ("https://listed.example/anything", True),  # AGENTGUARD_INDEX_HOSTS
        ("file:///srv/wheels", True),  # a folder, not a host
    ],
)
def test_which_index_a_lock_names_may_be_read(
    monkeypatch: pytest.MonkeyPatch, url: str, allowed: bool
) -> None:
    monkeypatch.setenv("AGENTGUARD_INDEX_HOSTS", "listed.example")
    assert cf.configured("https://corp.example/simple").allows(url) is allowed


def test_a_wheel_on_the_index_origin_is_read_as_named_any_other_is_looked_up() -> None:
    allowed = cf.Configured(("https://corp.example/simple",))
    assert allowed.allows_file("https://corp.example/files/a-1-py3-none-any.whl")
    assert not allowed.allows_file("https://cdn.example/a-1-py3-none-any.whl")
    assert not allowed.allows_file("http://corp.example/files/a-1-py3-none-any.whl")


def test_each_index_named_and_not_configured_is_one_skipped_source() -> None:
    allowed = cf.Configured(("https://corp.example/simple",))
    sources = allowed.skipped(
        [
            "https://corp.example/simple",
            "https://evil.example/simple?token=Tk-999",
            "https://evil.example/simple/?token=Tk-999",
        ],
        "uv.lock",
    )
    assert [s.to_json() for s in sources] == [
        {
            "kind": "index",
            "name": "https://evil.example/simple?token=REDACTED",
            "status": "skipped",
            "reason": "named by uv.lock, not an index configured for this run: not contacted "
            f"(to read it, {cf.HOW})",
        }
    ]
