"""``python -m agentguard.inspect.image [--stream] [--platform P] IMAGE``: a one-line summary.

A developer's entry point (the benchmark times it); users run ``agentguard inspect``.
Exit code 3 when a source failed, as the CLI's table says for an incomplete run.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agentguard.findings import SourceStatus
from agentguard.inspect.image import read_image_archive, read_image_stream


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agentguard.inspect.image")
    parser.add_argument("image", type=Path)
    parser.add_argument("--platform")
    parser.add_argument("--stream", action="store_true", help="read it as a one-pass stream")
    args = parser.parse_args(argv)
    if args.stream:
        with args.image.open("rb", buffering=0) as f:
            read = read_image_stream(f, target=str(args.image), platform=args.platform)
    else:
        read = read_image_archive(args.image, target=str(args.image), platform=args.platform)
    facts = read.facts
    failed = [s for s in read.sources if s.status is SourceStatus.FAILED]
    if facts is None:
        line = "no image read"
    else:
        entries = sum(layer.entries or 0 for layer in facts.layers)
        line = (
            f"{read.image_id} {read.platform}: {len(facts.layers)} layers, {entries} entries, "
            f"workdir {facts.config.workdir or '/'} ({len(facts.workdir_entries)} entries"
            f"{', truncated' if facts.workdir_entries_truncated else ''}), "
            f"{len(facts.installed)} dists, {len(facts.contents)} files collected"
        )
    from agentguard.cli_shared import say

    sys.stdout.write(say(f"{line}; {len(failed)} failed sources") + "\n")
    for s in failed:
        sys.stdout.write(say(f"  failed {s.kind} {s.name}: [{s.error_code}] {s.reason}") + "\n")
    return 3 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
