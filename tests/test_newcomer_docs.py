"""What a newcomer meets holds together: the README is a landing page, the CLI reference is
the commands' own, no page or file names a URL nobody owns, and the distribution name is the
same everywhere it is written."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from agentguard import DISTRIBUTION, __version__
from agentguard.cli import app
from agentguard.cli_reference import DEFAULT_OUT, commands, page, root_command, visible_params

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO = Path(__file__).resolve().parent.parent


def test_the_readme_is_a_landing_page() -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    lines = text.splitlines()
    assert len(lines) <= 220, len(lines)
    # exactly the two set-up commands, first thing after the pitch
    blocks = re.findall(r"```sh\n(.*?)```", text, flags=re.S)
    assert len(blocks) == 2, blocks
    assert blocks[0].startswith("python3 -m venv .venv && .venv/bin/pip install -q . && ")
    assert blocks[1] == "bash scripts/test\n"
    for heading in ("## Set up", "## In CI", "## Exit codes (every command)", "## Documentation"):
        assert heading in text
    # every link of the landing page leads to a file that exists
    for target in re.findall(r"\]\(([^)#]+)\)", text):
        assert (REPO / target).is_file(), target


def test_the_cli_reference_is_generated_from_the_commands() -> None:
    committed = (REPO / DEFAULT_OUT).read_text(encoding="utf-8")
    assert committed == page(), "regenerate with: python -m agentguard.cli_reference"


@pytest.mark.parametrize("name", [name for name, _ in commands(root_command())])
def test_the_cli_reference_agrees_with_help(name: str) -> None:
    """Every option `agentguard NAME --help` shows is in the reference's section, and the
    section names no option the command does not take."""
    result = CliRunner().invoke(app, [name, "--help"], terminal_width=200, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    reference = (REPO / DEFAULT_OUT).read_text(encoding="utf-8")
    section = reference.split(f"## `agentguard {name}`", 1)[1].split("\n## ", 1)[0]
    command = dict(commands(root_command()))[name]
    shown: set[str] = set()
    for line in result.output.splitlines():
        cell = line.strip().strip("│").strip()
        if cell.startswith("-"):  # a row of the options table: its first columns name it
            for token in cell.split():  # names (--x, --no-x, -x) and the TYPE, then the help
                if not (token.startswith("-") or token.isupper()):
                    break
                shown |= set(re.findall(r"^(--[a-z][a-z0-9-]*)", token))
    shown -= {"--help"}
    documented = set(re.findall(r"`(--[a-z][a-z0-9-]*)`", section))
    taken = {o for p in visible_params(command) for o in (*p.opts, *p.secondary_opts)}
    taken = {o for o in taken if o.startswith("--")}
    assert documented == taken
    assert shown <= taken, shown - taken
    assert taken <= shown, taken - shown


# URLs that name something real and owned by someone (schemas, standards), and documentation
# examples that cannot resolve (the .invalid TLD, "host" placeholders).
_ALLOWED_URL = re.compile(
    r"^https?://("
    r"json-schema\.org/|json\.schemastore\.org/sarif-2\.1\.0\.json|pre-commit\.com"
    r"|[^/]*\.(invalid|example)(/|$)|host(/|$)|\.\.\./|[^/@]+@host(/|$)"
    r"|127\.0\.0\.1[:/]"
    # protocol identifiers the provenance check must match, not links: the SLSA and npm
    # publish predicate types of npm's attestations, and the in-toto statement types
    r"|slsa\.dev/provenance/$|github\.com/npm/attestation/tree/main/specs/publish/v0\.1$"
    r"|in-toto\.io/Statement/v(0\.1|1)$"
    r")"
)
_URL = re.compile(r"https?://[^\s)\"'`<>\]]+")


def _published_files() -> list[Path]:
    roots = [REPO / "agentguard", REPO / "docs", REPO / "recipes", REPO / ".github"]
    files = [
        REPO / n for n in ("README.md", "action.yml", ".pre-commit-hooks.yaml", "pyproject.toml")
    ]
    files += [REPO / "mkdocs.yml"]
    for root in roots:
        files += [p for p in root.rglob("*") if p.is_file() and p.suffix != ".pyc"]
    return files


def test_no_invented_url_anywhere() -> None:
    """No repository or documentation URL that the project does not own is written into
    the package, its docs or its CI files: the public home is not known yet, and a link to a
    guessed address sends users (and SARIF viewers) to whoever registers it."""
    found: list[str] = []
    for path in _published_files():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for url in _URL.findall(text):
            if not _ALLOWED_URL.match(url):
                found.append(f"{path.relative_to(REPO)}: {url}")
    assert found == []


def test_no_url_is_given_where_the_home_is_unknown() -> None:
    """The one configurable place, [project.urls], names nothing yet, so SARIF carries no
    helpUri or informationUri (the rule's page travels in `help`)."""
    meta = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert "urls" not in meta
    from agentguard.report import sarif

    sarif.project_urls.cache_clear()
    assert sarif.home_page() is None


def test_the_distribution_name_is_the_same_everywhere() -> None:
    meta = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert meta["name"] == DISTRIBUTION
    assert meta["scripts"] == {"agentguard": "agentguard.__main__:run"}
    action = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
    assert action["inputs"]["package"]["default"] == f"{DISTRIBUTION}=={__version__}"
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert f"`{DISTRIBUTION}`" in readme
    ci = (REPO / "docs" / "ci.md").read_text(encoding="utf-8")
    assert f"pip install {DISTRIBUTION}=={__version__}" in ci
    fleet = yaml.safe_load(
        (REPO / ".github" / "workflows" / "agentguard-fleet.yml").read_text(encoding="utf-8")
    )
    steps = fleet["jobs"]["check"]["steps"]
    install = next(s for s in steps if str(s.get("name", "")).startswith("Install agentguard"))
    assert f'"{DISTRIBUTION}==$VERSION"' in install["run"]
    assert (
        fleet.get("on", fleet.get(True))["workflow_call"]["inputs"]["agentguard-version"]["default"]
        == __version__
    )
    # and the installed metadata is found under that name (SARIF reads its URLs from it)
    from importlib import metadata

    assert metadata.version(DISTRIBUTION) == __version__


def test_the_docs_site_builds_with_every_link_checked(tmp_path: Path) -> None:
    """mkdocs in strict mode: a broken link, a missing anchor or a page left out of the
    navigation fails the build."""
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "NO_MKDOCS_2_WARNING": "1", "HOME": str(tmp_path)},
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert (tmp_path / "site" / "reference" / "cli" / "index.html").is_file()
    assert (tmp_path / "site" / "fleet" / "index.html").is_file()
