"""Rule documentation pages, generated from the rule classes' docstrings.

``python -m agentguard.docs`` writes ``docs/rules/<ID>.md`` for every registered rule and
``docs/rules/README.md`` (the index); ``--check`` writes nothing and exits 1 when the
committed pages differ from the code. ``agentguard explain`` prints the same page.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from agentguard.rules.base import Rule, all_rules

GENERATED = (
    "<!-- generated from the rule's docstring by `python -m agentguard.docs`; do not edit -->"
)
DEFAULT_OUT = Path("docs/rules")


def rule_page(rule: type[Rule]) -> str:
    doc = rule.doc()
    summary, _, body = doc.partition("\n\n")
    options: Mapping[str, str] = getattr(rule, "options", {})
    lines = [
        GENERATED,
        "",
        f"# {rule.id}: {rule.name}",
        "",
        f"**{rule.title}**",
        "",
        f"- Default severity: {rule.default_severity.value}",
        f"- Family: {rule.family}",
    ]
    if options:
        lines.append("- Options (`[tool.agentguard.rules." + rule.id + "]`):")
        lines.extend(f"  - `{name}`: {text}" for name, text in sorted(options.items()))
    lines += ["", summary.strip(), ""]
    if body.strip():
        lines += [body.strip(), ""]
    lines += [
        "## Silencing it",
        f"Only where the hazard is understood and accepted: `# agentguard: ignore[{rule.id}]` "
        "at the end of the reported line or on a comment line just above it; "
        f'`ignore = {{ {rule.id} = ["path/glob", "file:line"] }}` or `disable = ["{rule.id}"]` '
        "in `[tool.agentguard]`; or a baseline (`agentguard check --write-baseline`). "
        "Suppressed findings stay in JSON and SARIF output, marked with the reason.",
        "",
    ]
    return "\n".join(lines)


def index_page(rules: Sequence[type[Rule]]) -> str:
    lines = [
        GENERATED,
        "",
        "# Rules",
        "",
        "`agentguard rules` lists them; `agentguard explain <ID>` prints a page.",
        "",
        "| Id | Name | Default severity | Title |",
        "|----|------|------------------|-------|",
    ]
    for r in rules:
        lines.append(f"| [{r.id}]({r.id}.md) | {r.name} | {r.default_severity.value} | {r.title} |")
    return "\n".join(lines) + "\n"


def pages() -> dict[str, str]:
    """File name (inside docs/rules) -> content, for every registered rule plus the index."""
    rules = all_rules()
    out = {f"{r.id}.md": rule_page(r) for r in rules}
    out["README.md"] = index_page(rules)
    return out


def drift(out_dir: Path) -> list[str]:
    """What differs between ``out_dir`` and the code: missing, stale and extra pages."""
    want = pages()
    problems: list[str] = []
    for name, text in sorted(want.items()):
        path = out_dir / name
        if not path.is_file():
            problems.append(f"missing: {path}")
        elif path.read_text(encoding="utf-8") != text:
            problems.append(f"stale: {path}")
    if out_dir.is_dir():
        for path in sorted(out_dir.glob("*.md")):
            if path.name not in want:
                problems.append(f"no such rule any more: {path}")
    return problems


def write(out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in sorted(pages().items()):
        path = out_dir / name
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            written.append(path)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agentguard.docs", description=__doc__)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="default: docs/rules")
    parser.add_argument("--check", action="store_true", help="exit 1 when the pages drifted")
    args = parser.parse_args(argv)
    if args.check:
        problems = drift(args.out)
        for p in problems:
            sys.stderr.write(p + "\n")
        if problems:
            sys.stderr.write("regenerate with: python -m agentguard.docs\n")
        return 1 if problems else 0
    for path in write(args.out):
        sys.stderr.write(f"wrote {path}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
