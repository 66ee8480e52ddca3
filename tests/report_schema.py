"""Every JSON report the tests see is checked against the published schema.

``agentguard/schemas/report-1.json`` is the contract for ``--format json``. In-process runs
(CliRunner, direct calls) are checked where the report is built: ``tests/conftest.py``
wraps :func:`agentguard.report.json_out.report_to_json` and ``render_json`` for the whole
session. Child processes (``python -m agentguard``) are checked by the helpers that start
them (:func:`check_cli_output`), on stdout and on the ``--output`` file.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jsonschema

SCHEMA_FILE = Path(__file__).resolve().parent.parent / "agentguard" / "schemas" / "report-1.json"
RULES_SCHEMA_FILE = SCHEMA_FILE.with_name("rules-1.json")


@functools.cache
def _validator(path: Path) -> jsonschema.protocols.Validator:
    schema = json.loads(path.read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)  # type: ignore[no-any-return]


def validate_report(doc: Any) -> None:
    """Raise ``jsonschema.ValidationError`` unless ``doc`` is an agentguard.report/1 report."""
    _validator(SCHEMA_FILE).validate(doc)


def validate_rules(doc: Any) -> None:
    """Raise unless ``doc`` is what ``rules``/``explain --format json`` write."""
    _validator(RULES_SCHEMA_FILE).validate(doc)


def validate_json_text(text: str) -> None:
    """One JSON document written by agentguard: a report, or the rules catalogue."""
    doc = json.loads(text)
    if isinstance(doc, dict) and doc.get("schema") == "agentguard.rules/1":
        validate_rules(doc)
    else:
        validate_report(doc)


def _option(args: Sequence[str], *names: str) -> str | None:
    for i, arg in enumerate(args):
        for name in names:
            if arg == name and i + 1 < len(args):
                return args[i + 1]
            if arg.startswith(name + "="):
                return arg.split("=", 1)[1]
    return None


def check_cli_output(args: Sequence[str], stdout: str, cwd: Path | None) -> None:
    """After a child ``agentguard ARGS`` run: a JSON report on stdout or in ``--output`` is
    valid. (Nothing is checked for a usage error, which writes no report.)"""
    if _option(args, "--format", "-f") != "json":
        return
    output = _option(args, "--output", "-o")
    if output is not None:
        path = Path(output) if cwd is None else Path(cwd, output)
        if path.is_file():
            validate_json_text(path.read_text(encoding="utf-8"))
    elif stdout.strip():
        validate_json_text(stdout)
