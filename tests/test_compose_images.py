"""--images-from-compose: every compose file read, unknown images are failed sources."""

from __future__ import annotations

from pathlib import Path

from agentguard.findings import Source
from agentguard.inspect.compose_images import ComposeImages, compose_images


def test_images_from_every_compose_file_and_the_ones_it_cannot_name(tmp_path: Path) -> None:
    (tmp_path / "compose.yaml").write_text(
        "services:\n"
        "  agent:\n    image: agent:1.4\n"
        "  worker:\n    build: ./worker\n"
        "  tagged:\n    image: agent:${TAG}\n"
    )
    (tmp_path / "docker-compose.yml").write_text(
        "services:\n  agent:\n    image: agent:1.4\n  db:\n    image: postgres:16\n"
    )
    assert compose_images(tmp_path) == ComposeImages(
        images=("agent:1.4", "postgres:16"),
        sources=(
            Source.ok("compose", "compose.yaml"),
            Source.failed(
                "image",
                "compose.yaml: services.worker",
                "the service names no image (built from a Dockerfile?): not inspected",
                error_code="compose-image-unknown",
                retryable=False,
                remedy="build and tag it, then pass --image <tag> (or give the service an `image:`)",
            ),
            Source.failed(
                "image",
                "compose.yaml: services.tagged",
                "image 'agent:${TAG}' uses variables agentguard does not expand: not inspected",
                error_code="compose-image-unknown",
                retryable=False,
                remedy="pass the resolved reference with --image",
            ),
            Source.ok("compose", "docker-compose.yml"),
        ),
    )


def test_invalid_compose_file_is_a_failed_source(tmp_path: Path) -> None:
    (tmp_path / "compose.yml").write_text("services: [\n")
    found = compose_images(tmp_path)
    assert found.images == ()
    (source,) = found.sources
    assert (source.kind, source.name, source.status.value, source.error_code) == (
        "compose",
        "compose.yml",
        "failed",
        "compose-invalid",
    )
    assert source.reason is not None and source.reason.startswith("not valid YAML: ")


def test_no_services_mapping_is_a_failed_source(tmp_path: Path) -> None:
    (tmp_path / "compose.yaml").write_text("version: '3'\n")
    assert compose_images(tmp_path).sources == (
        Source.failed(
            "compose",
            "compose.yaml",
            "no `services` mapping",
            error_code="compose-invalid",
            retryable=False,
        ),
    )
