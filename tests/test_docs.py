"""Rule pages: generated from the rule classes; the committed docs/rules must not drift."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from agentguard.cli import app
from agentguard.docs import drift, main, pages
from agentguard.report.catalogue import plain_page
from agentguard.rules.base import all_rules, get_rule

DOCS = Path(__file__).resolve().parent.parent / "docs" / "rules"


def test_the_static_rule_id_list_is_the_registry() -> None:
    # config.py checks rule ids against RULE_IDS without importing every family
    from agentguard.rules import RULE_IDS

    assert sorted(RULE_IDS) == [r.id for r in all_rules()]


def test_committed_rule_pages_match_the_code() -> None:
    assert drift(DOCS) == [], "regenerate with: python -m agentguard.docs"


def test_every_rule_has_a_page_with_the_four_sections() -> None:
    generated = pages()
    assert sorted(generated) == sorted([*(f"{r.id}.md" for r in all_rules()), "README.md"])
    for rule in all_rules():
        page = generated[f"{rule.id}.md"]
        assert page.splitlines()[2] == f"# {rule.id}: {rule.name}"
        for section in ("## What it does", "## Why is this bad?", "## Example", "## Use instead"):
            assert section in page, f"{rule.id} lacks {section}"
        assert f"| [{rule.id}]({rule.id}.md) | {rule.name} |" in generated["README.md"]


def test_drift_names_missing_stale_and_extra_pages(tmp_path: Path) -> None:
    assert main(["--out", str(tmp_path)]) == 0
    (tmp_path / "AG101.md").write_text("edited by hand\n")
    (tmp_path / "AG102.md").unlink()
    (tmp_path / "AG199.md").write_text("a rule that is gone\n")
    assert drift(tmp_path) == [
        f"stale: {tmp_path / 'AG101.md'}",
        f"missing: {tmp_path / 'AG102.md'}",
        f"no such rule any more: {tmp_path / 'AG199.md'}",
    ]
    assert main(["--out", str(tmp_path), "--check"]) == 1


def test_explain_prints_the_page_and_rules_lists_every_rule() -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["explain", "ag101"])
    assert result.exit_code == 0
    # piped: the page as committed in docs/rules, without the generated-file comment
    assert result.stdout == plain_page(get_rule("AG101"))
    listing = runner.invoke(app, ["rules"])
    assert listing.exit_code == 0
    lines = listing.stdout.splitlines()
    assert lines[0].split() == ["id", "name", "severity", "title"]
    assert [line.split()[0] for line in lines[1:]] == [r.id for r in all_rules()]
    ag103 = get_rule("AG103")
    assert lines[1 + [r.id for r in all_rules()].index("AG103")].split() == [
        "AG103",
        ag103.name,
        ag103.default_severity.value,
        *ag103.title.split(),
    ]


def test_explain_an_unknown_rule_exits_2() -> None:
    result = CliRunner().invoke(app, ["explain", "AG999"])
    assert result.exit_code == 2
    assert result.stderr == "agentguard: error: no rule 'AG999'; `agentguard rules` lists them\n"
