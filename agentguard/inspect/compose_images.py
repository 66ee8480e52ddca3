"""The images a project's compose file(s) name, for ``agentguard check --images-from-compose``.

Gathering only: reads the compose files, records each as a source, and returns image
references. A service that is only ``build:``-ed (no ``image:``), or whose image
reference uses ``${VARIABLES}``, names no image agentguard can inspect: it is recorded
as a failed source (the run cannot vouch for that container), never silently dropped.
When several compose files exist, all of them are read (no file is preferred).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from agentguard import safeio
from agentguard.findings import Source, SourceStatus
from agentguard.inspect.project.lined import PARSE_FAILURES, document_error

COMPOSE_FILES = ("compose.yaml", "compose.yml", "docker-compose.yaml", "docker-compose.yml")
MAX_COMPOSE_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class ComposeImages:
    images: tuple[str, ...]  # unique, in file and service order
    sources: tuple[Source, ...]


def _read(path: Path, shown: str) -> tuple[object, Source]:
    try:
        if path.stat().st_size > MAX_COMPOSE_BYTES:
            return None, Source.failed(
                "compose",
                shown,
                f"larger than {MAX_COMPOSE_BYTES} bytes",
                error_code="compose-too-large",
                retryable=False,
            )
        data = yaml.safe_load(safeio.read_text(path, cap=MAX_COMPOSE_BYTES))
    except (OSError, UnicodeDecodeError) as exc:
        return None, Source.failed(
            "compose",
            shown,
            f"cannot read: {exc}",
            error_code="compose-unreadable",
            retryable=False,
        )
    except yaml.YAMLError as exc:
        return None, Source.failed(
            "compose",
            shown,
            f"not valid YAML: {exc}".replace("\n", " "),
            error_code="compose-invalid",
            retryable=False,
            remedy="fix the file (`docker compose config` shows the error)",
        )
    except PARSE_FAILURES as exc:  # nesting, a 4301-digit integer...: this file's failure
        return None, Source.failed(
            "compose",
            shown,
            str(document_error(exc)),
            error_code="compose-invalid",
            retryable=False,
            remedy="fix the file (`docker compose config` shows the error)",
        )
    return data, Source.ok("compose", shown)


def compose_images(project: Path) -> ComposeImages:
    images: list[str] = []
    sources: list[Source] = []
    found = [name for name in COMPOSE_FILES if (project / name).is_file()]
    if not found:
        return ComposeImages(
            (),
            (
                Source.failed(
                    "compose",
                    str(project),
                    f"--images-from-compose: no compose file ({', '.join(COMPOSE_FILES)})",
                    error_code="compose-missing",
                    retryable=False,
                    remedy="name the images with --image instead",
                ),
            ),
        )
    for name in found:
        data, source = _read(project / name, name)
        sources.append(source)
        if source.status is SourceStatus.FAILED:
            continue
        services = data.get("services") if isinstance(data, dict) else None
        if not isinstance(services, dict):
            sources[-1] = Source.failed(
                "compose",
                name,
                "no `services` mapping",
                error_code="compose-invalid",
                retryable=False,
            )
            continue
        for service, spec in services.items():
            image = spec.get("image") if isinstance(spec, dict) else None
            where = f"{name}: services.{service}"
            if not isinstance(image, str) or not image.strip():
                sources.append(
                    Source.failed(
                        "image",
                        where,
                        "the service names no image (built from a Dockerfile?): not inspected",
                        error_code="compose-image-unknown",
                        retryable=False,
                        remedy="build and tag it, then pass --image <tag> (or give the service "
                        "an `image:`)",
                    )
                )
            elif "$" in image:
                sources.append(
                    Source.failed(
                        "image",
                        where,
                        f"image {image!r} uses variables agentguard does not expand: not inspected",
                        error_code="compose-image-unknown",
                        retryable=False,
                        remedy="pass the resolved reference with --image",
                    )
                )
            elif image.strip() not in images:
                images.append(image.strip())
    return ComposeImages(tuple(images), tuple(sources))
