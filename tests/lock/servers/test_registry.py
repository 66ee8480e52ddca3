"""A hostile npm registry on 127.0.0.1: every bad answer is a failed source with its own
code, never a pin; a good one is pinned with the integrity the tarball hashes to."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from agentguard.facts.mcp_pins import ServerLaunch, ServerPin
from agentguard.facts.npm_trust import ProvenanceCheck, RegistrySignature
from agentguard.lock.deadline import Deadline
from agentguard.lock.servers import npm
from tests.lock.npm_registry import NpmRegistry, integrity, serve, tarball

NAME = "@acme/tracker-mcp"


def launch(requested: str | None = None) -> ServerLaunch:
    spec = NAME + (f"@{requested}" if requested else "")
    return ServerLaunch(
        "npm", NAME, requested, spec, "tracker", ".mcp.json", 3, ".mcp.json", "npx", 1
    )


@pytest.fixture()
def registry() -> Iterator[NpmRegistry]:
    reg = NpmRegistry({NAME: ["1.3.0", "1.4.2", "2.0.0", "2.0.1"]})
    reg.provenance.add((NAME, "2.0.1"))
    with serve(reg):
        yield reg


def resolve(
    reg: NpmRegistry, requested: str | None = None, keep: str | None = None, seconds: float = 30
) -> ServerPin:
    return npm.resolve(npm.Registry(reg.url, Deadline.start(seconds)), launch(requested), keep)


def test_a_good_answer_is_pinned_with_the_tarballs_integrity(registry: NpmRegistry) -> None:
    pin = resolve(registry)
    assert pin == ServerPin(
        kind="npm",
        package=NAME,
        version="2.0.1",
        server="tracker",
        path=".mcp.json",
        line=3,
        requested=None,
        integrity=integrity(tarball(NAME, "2.0.1")),
        tarball=f"{registry.url}{NAME}/-/tracker-mcp-2.0.1.tgz",
        registry=registry.url,
        majors=("1", "2"),
        released_majors=("1", "2"),
        provenance=True,
        signature=RegistrySignature("absent"),
        # listed, but not served: never "verified", never "absent"
        attestation=ProvenanceCheck(
            "unchecked", why="the packument lists provenance, but the registry serves none (404)"
        ),
    )
    assert registry.requests == [
        NAME,
        f"{NAME}/-/tracker-mcp-2.0.1.tgz",
        f"-/npm/v1/attestations/{NAME}@2.0.1",
    ]


def test_a_range_gets_its_newest_and_a_locked_version_is_kept(registry: NpmRegistry) -> None:
    assert (resolve(registry, "^1").version, resolve(registry, "^1").majors) == ("1.4.2", ("1",))
    assert resolve(registry, None, keep="1.3.0").version == "1.3.0"  # kept: still admitted
    assert resolve(registry, "^2", keep="1.3.0").version == "2.0.1"  # not admitted: moves
    assert resolve(registry, "latest").version == "2.0.1"


@pytest.mark.parametrize(
    ("plan", "code"),
    [
        ("garbage", "npm-garbage"),
        ("deep", "npm-garbage"),
        ("other-name", "npm-garbage"),
        ("bad-integrity", "npm-integrity-mismatch"),
        ("sha1-only", "npm-no-integrity"),
        ("tarball-elsewhere", "npm-bad-url"),
        ("redirect http://localhost:1/x", "npm-bad-url"),  # another origin of this machine
        ("redirect https://registry.example.invalid/x", "npm-bad-url"),  # another host
        ("redirect file:///etc/passwd", "npm-bad-url"),
    ],
)
def test_hostile_answers_are_failed_sources(registry: NpmRegistry, plan: str, code: str) -> None:
    registry.plan = lambda path: plan if "/-/" not in path or plan in ("bad-integrity",) else "ok"
    with pytest.raises(npm.NpmError) as err:
        resolve(registry)
    assert err.value.code == code, str(err.value)


def test_a_redirect_on_the_registrys_origin_is_followed(registry: NpmRegistry) -> None:
    registry.plan = lambda path: f"redirect {registry.url}mirror/{NAME}" if path == NAME else "ok"
    assert resolve(registry).version == "2.0.1"
    assert registry.requests[:2] == [NAME, f"mirror/{NAME}"]


def test_a_huge_body_is_cut_off_at_the_cap(
    registry: NpmRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(npm, "MAX_PACKUMENT_BYTES", 1024 * 1024)
    registry.huge_bytes = 8 * 1024 * 1024
    registry.plan = lambda path: "huge"
    with pytest.raises(npm.NpmError) as err:
        resolve(registry)
    assert err.value.code == "npm-too-large"


def test_a_slow_drip_stops_at_the_deadline(registry: NpmRegistry) -> None:
    registry.slow_interval = 0.2
    registry.plan = lambda path: "slow"
    started = time.monotonic()
    with pytest.raises(npm.NpmError) as err:
        resolve(registry, seconds=1.5)
    assert err.value.code == "deadline-exceeded"
    assert time.monotonic() - started < 10


def test_an_unknown_package_and_a_range_nothing_matches(registry: NpmRegistry) -> None:
    with pytest.raises(npm.NpmError) as err:
        npm.resolve(npm.Registry(registry.url, Deadline.start(30)), launch("^9"), None)
    assert err.value.code == "npm-no-match"
    with pytest.raises(npm.NpmError) as err:
        npm.Registry(registry.url, Deadline.start(30)).packument("@acme/nothing-here")
    assert err.value.code == "npm-not-found"
