"""One set of CLI conventions, checked on every command (a new command must be classified
here): --format/--output wherever a result is printed, --config/--fail-on/--verbose/--quiet/
--sarif-root wherever they mean something, help texts that read cleanly, progress only on a
terminal, explain drawn for a terminal and plain when piped."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from agentguard.cli import app
from agentguard.commands import catalogue
from agentguard.docs import GENERATED, rule_page
from agentguard.rules.base import all_rules, get_rule
from tests.lock.helpers import write_project
from tests.report_schema import validate_rules

# what each command is: "report" commands gather and judge (exit codes from findings);
# "catalogue" commands print the rules
KIND = {
    "lock": "report",
    "inspect": "report",
    "check": "report",
    "harden": "report",
    "rules": "catalogue",
    "explain": "catalogue",
    # the capability map: a view, not a gate (its formats include mermaid and markdown)
    "map": "view",
}
EVERY = {"--format", "--output"}
REPORTS = {"--config", "--fail-on", "--verbose", "--quiet", "--sarif-root"}
SHORT = {"--format": "-f", "--output": "-o", "--verbose": "-v", "--quiet": "-q"}


def _commands() -> dict[str, Any]:
    group: Any = typer.main.get_command(app)  # typer's own click: compared by shape
    return dict(group.commands)


def _options(command: Any) -> dict[str, Any]:
    out = {}
    for p in command.params:
        if p.param_type_name == "option":
            for name in p.opts:
                out[name] = p
    return out


def test_every_command_is_classified() -> None:
    assert set(_commands()) == set(KIND)


@pytest.mark.parametrize("name", sorted(KIND))
def test_the_shared_options_are_where_they_mean_something(name: str) -> None:
    options = _options(_commands()[name])
    want = EVERY | (REPORTS if KIND[name] == "report" else set())
    assert want <= set(options), f"{name} lacks {sorted(want - set(options))}"
    if KIND[name] == "catalogue":
        # no findings, no exit code to tune, nothing slow, no configuration to read
        assert not (REPORTS & set(options)), f"{name}: {sorted(REPORTS & set(options))}"
    for long, short in SHORT.items():
        if long in options:
            assert short in options[long].opts, f"{name} {long} without {short}"
    fmt = options["--format"]
    formats = [str(getattr(c, "value", c)) for c in fmt.type.choices]
    if KIND[name] == "view":
        assert formats[:2] == ["text", "json"], formats
        return
    assert formats == ["text", "json", "sarif"]
    # one definition each: the same help text on every command
    for opt in want:
        assert options[opt].help == _options(_commands()["check"])[opt].help, (name, opt)


_DOUBLE_SPACE = re.compile(r"\S  +\S")


def _texts(command: Any) -> list[tuple[str, str]]:
    out = [("help", command.help or "")]
    for p in command.params:
        help_text = getattr(p, "help", None)
        assert help_text, f"{p.name} has no help"
        out.append((p.name or "?", help_text))
    return out


@pytest.mark.parametrize("name", sorted(KIND))
def test_help_texts_read_cleanly(name: str) -> None:
    command = _commands()[name]
    for what, text in _texts(command):
        assert not _DOUBLE_SPACE.search(text), f"{name} {what}: double space in {text!r}"
        assert text == text.strip(), f"{name} {what}: stray whitespace in {text!r}"
        if what != "help":
            assert "\n" not in text, f"{name} {what}: a help line broken in two: {text!r}"
    # the command's own help is one paragraph per blank-line block, each a whole sentence
    for para in (command.help or "").split("\n\n"):
        assert para.rstrip().endswith((".", ")", ":")), f"{name}: {para!r}"
    # rendered wide enough, every option's help is on one line of the help screen
    result = CliRunner().invoke(app, [name, "--help"], terminal_width=240, env={"COLUMNS": "240"})
    assert result.exit_code == 0, result.output
    lines = [" ".join(line.split()) for line in result.output.splitlines()]
    for what, text in _texts(command)[1:]:
        flat = " ".join(text.replace("\\[", "[").split())  # rich markup escapes
        assert any(flat in line for line in lines), f"{name} {what}: {flat!r} broken in --help"


def test_rules_in_every_format(tmp_path: Path, sarif_schema: dict[str, Any]) -> None:
    runner = CliRunner()
    text = runner.invoke(app, ["rules"])
    assert text.exit_code == 0
    assert [line.split()[0] for line in text.stdout.splitlines()[1:]] == [r.id for r in all_rules()]
    assert all(line == line.rstrip() for line in text.stdout.splitlines())
    as_json = runner.invoke(app, ["rules", "--format", "json"])
    doc = json.loads(as_json.stdout)
    validate_rules(doc)
    assert [r["id"] for r in doc["rules"]] == [r.id for r in all_rules()]
    out = tmp_path / "rules.sarif"
    assert runner.invoke(app, ["rules", "-f", "sarif", "-o", str(out)]).stdout == ""
    sarif = json.loads(out.read_text())
    # a catalogue, not an analysis: the schema holds; there is nothing to upload
    import jsonschema

    jsonschema.validate(sarif, sarif_schema)
    assert sarif["runs"][0]["results"] == []
    assert [r["id"] for r in sarif["runs"][0]["tool"]["driver"]["rules"]] == [
        r.id for r in all_rules()
    ]


def test_explain_plain_when_piped_drawn_on_a_terminal(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    rule = get_rule("AG101")
    page = rule_page(rule)
    plain = page[len(GENERATED) :].lstrip("\n")
    runner = CliRunner()
    piped = runner.invoke(app, ["explain", "ag101"])
    assert piped.exit_code == 0
    assert piped.stdout == plain  # the committed Markdown page, without the file's comment
    assert "<!--" not in piped.stdout

    monkeypatch.setattr(catalogue, "_terminal", lambda: True)
    drawn = runner.invoke(app, ["explain", "AG101"], env={"NO_COLOR": "1"})
    assert drawn.exit_code == 0
    out = drawn.stdout
    assert "<!--" not in out and "**" not in out and "## " not in out
    assert "AG101: major-spanning-range" in out
    assert "What it does" in out and "Use instead" in out
    assert "\x1b[" not in out  # NO_COLOR: laid out, not coloured
    coloured = runner.invoke(app, ["explain", "AG101"], env={"NO_COLOR": None})
    assert "\x1b[" in coloured.stdout
    # --output is a file, never drawn
    target = tmp_path / "AG101.md"
    runner.invoke(app, ["explain", "AG101", "-o", str(target)])
    assert target.read_text() == plain

    as_json = runner.invoke(app, ["explain", "AG101", "--format", "json"])
    doc = json.loads(as_json.stdout)
    validate_rules(doc)
    assert [(r["id"], r["page"]) for r in doc["rules"]] == [("AG101", plain)]
    unknown = runner.invoke(app, ["explain", "AG999"])
    assert unknown.exit_code == 2


@pytest.mark.usefixtures("isolated_cache")
def test_progress_only_on_a_terminal(tmp_path: Path, agent_index: dict[str, Any]) -> None:
    project = write_project(tmp_path / "bot", ["httpx-lite==1.0.0"])
    runner = CliRunner()
    locked = runner.invoke(app, ["lock", str(project), "--index-url", agent_index["url"]])
    assert locked.exit_code == 0, locked.output  # a low AG101 on typing-x>=1
    assert locked.stderr == ""  # not a terminal: no progress lines
    for args in (["check", str(project)], ["inspect", str(project), "--no-lock"]):
        result = runner.invoke(app, args)
        assert result.stderr == "", (args, result.stderr)


def test_config_is_read_by_lock_and_harden(tmp_path: Path) -> None:
    project = write_project(tmp_path / "bot", ["httpx-lite==1.0.0"])
    bad = tmp_path / "bad.toml"
    bad.write_text("[nonsense]\nx = 1\n")
    runner = CliRunner()
    for args in (
        ["lock", "--check", str(project), "--config", str(bad)],
        ["harden", str(project), "--config", str(bad), "--out", str(tmp_path / "h")],
    ):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (args, result.output)
        assert "nonsense" in result.stderr, (args, result.stderr)
