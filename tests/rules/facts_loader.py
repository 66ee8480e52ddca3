"""Build ImageFacts / ContainerFacts from the small JSON fixtures under tests/fixtures/AGxxx/.

An ``image.json`` describes an image the way the reader would report it, in short form:

```json
{"target": "agent:1", "config": {"User": "", "WorkingDir": "/app", "Env": ["A=1"],
  "os": "linux", "architecture": "amd64",
  "history": [{"created_by": "ADD rootfs.tar /"}, {"created_by": "WORKDIR /app", "empty_layer": true}]},
 "entries": [["/app/.git", 1, "dir"]],
 "installed": [{"name": "mcp", "version": "1.27.0", "location": "/usr/lib/python3.12/site-packages",
                "layer": 1, "requires": ["anyio>=4"]}],
 "contents": [["/app/.mcp.json", 1, "{}"]]}
```

Layer digests are ``sha256:<index repeated>`` so expected findings can name them. An
``inspect.json`` is a (trimmed) `docker inspect` record of a container.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentguard.inspect.container import container_facts
from agentguard.inspect.facts import (
    ContainerFacts,
    FileContent,
    FileEntry,
    HistoryEntry,
    ImageConfig,
    ImageFacts,
    InstalledDist,
    LayerInfo,
)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def layer_digest(index: int) -> str:
    return "sha256:" + (f"{index:x}" * 64)[:64]


def image_from_json(data: dict[str, Any]) -> ImageFacts:
    cfg = data.get("config", {})
    history = tuple(
        HistoryEntry(h.get("created_by"), bool(h.get("empty_layer", False)))
        for h in cfg.get("history", [])
    )
    steps = [h.created_by for h in history if not h.empty_layer]
    layers = tuple(
        LayerInfo(index=i, digest=layer_digest(i), created_by=step, compression="none", entries=1)
        for i, step in enumerate(steps)
    )
    env = tuple(tuple(e.split("=", 1)) if "=" in e else (e, "") for e in cfg.get("Env", []))
    entries = tuple(
        FileEntry(path=p, layer_index=i, layer_digest=layer_digest(i), kind=k, size=0, mode=0o644)
        for p, i, k in data.get("entries", [])
    )
    installed = tuple(
        InstalledDist(
            name=d["name"],
            version=d["version"],
            location=d["location"],
            metadata_path=f"{d['location']}/{d['name'].replace('-', '_')}-{d['version']}.dist-info/METADATA",
            layer_digest=layer_digest(d.get("layer", 0)),
            requires=tuple(d.get("requires", [])),
        )
        for d in data.get("installed", [])
    )
    contents = tuple(
        FileContent(path=p, layer_digest=layer_digest(i), data=text.encode())
        for p, i, text in data.get("contents", [])
    )
    return ImageFacts(
        target=data.get("target", "agent:1"),
        image_id=data.get("image_id", "sha256:" + "c" * 64),
        repo_digests=tuple(data.get("repo_digests", [])),
        config=ImageConfig(
            user=cfg.get("User"),
            workdir=cfg.get("WorkingDir"),
            env=env,  # type: ignore[arg-type]
            history=history,
            architecture=cfg.get("architecture", "amd64"),
            os=cfg.get("os", "linux"),
        ),
        layers=layers,
        workdir_entries=entries,
        workdir_entries_truncated=bool(data.get("entries_truncated", False)),
        contents=contents,
        installed=installed,
        docker_socket_paths=tuple(data.get("docker_socket_paths", [])),
    )


def load_image(rule: str, case: str, name: str = "image.json") -> ImageFacts:
    return image_from_json(json.loads((FIXTURES / rule / case / "image" / name).read_text()))


def load_container(
    rule: str, case: str, image: ImageFacts | None = None, name: str = "inspect.json"
) -> ContainerFacts:
    attrs = json.loads((FIXTURES / rule / case / "container" / name).read_text())
    return container_facts(attrs, image)


def plain(findings: Any) -> list[dict[str, Any]]:
    """Whole findings as dicts (without the derived fingerprint), for exact comparison."""
    out = []
    for f in findings:
        d = f.to_json()
        d.pop("fingerprint")
        out.append(d)
    return out


def expect(
    rule_id: str,
    severity: str,
    message: str,
    *,
    locations: list[dict[str, Any]],
    evidence: dict[str, Any],
    fix: str,
    snippet: str | None = None,
    confidence: str = "high",
    ambiguous: bool = False,
) -> dict[str, Any]:
    """One whole finding, as ``plain`` renders it (the title comes from the rule class)."""
    from agentguard.rules.base import get_rule

    fix_json: dict[str, Any] = {"description": fix, "safe": False}
    if snippet is not None:
        fix_json["snippet"] = snippet
    return {
        "rule_id": rule_id,
        "title": get_rule(rule_id).title,
        "severity": severity,
        "confidence": confidence,
        "message": message,
        "locations": locations,
        "evidence": evidence,
        "fix": fix_json,
        "ambiguous": ambiguous,
        "suppressed": None,
    }


def only(rule_id: str, findings: Any) -> list[dict[str, Any]]:
    """The findings of one rule, in the order a report lists them."""
    from agentguard.findings import sort_findings

    return plain(sort_findings(f for f in findings if f.rule_id == rule_id))
