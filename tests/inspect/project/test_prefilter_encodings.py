"""The pre-filters test a Python file's text as Python decodes it, not its bytes.

Modelled on an attack on the lexical scan of string literals: a file that declares its
encoding (PEP 263) is decoded by Python, and by ``ast.parse`` for the readers, with that
encoding. In UTF-7 ``+ACIAIgAi-`` is three quotes (the bytes show none), so the bytes
``x = \"\"\"+ACIAIgAi-`` open a string that Python has closed, and the import after it looked
like a line of a docstring; in Shift_JIS, CP932, Big5 and GBK the second byte of ``表``,
``功`` or ``乗`` is ``\\``, which a scan of the bytes took for an escape of the quote after
it. In UTF-7 a name can also be spelled with no byte of it (``+AGM-laude_agent_sdk``). The
file was skipped as naming the SDK only in strings (or not at all): no finding, exit 0;
Python runs the agent. Each file must report what the same text written in UTF-8 reports.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentguard.cli import app
from agentguard.inspect.project.files import process_file
from agentguard.inspect.project.python_source import as_python_reads, declared_encoding

AGENT = """\
from claude_agent_sdk import ClaudeAgentOptions, query


async def run(prompt: str) -> None:
    options = ClaudeAgentOptions(
        permission_mode="bypassPermissions",
        allowed_tools=["Bash", "WebFetch"],
        cwd="/workspace",
    )
    async for message in query(prompt=prompt, options=options):
        print(message)
"""
# a string Python ends on its first line, the agent, then a string the scan of the bytes
# took for the end of the first one (and one more for Python to end it)
TAIL = 'y = """\n"""\n'


def _hidden(cookie: str, closer: bytes) -> bytes:
    return (
        f"# -*- coding: {cookie} -*-\n".encode()
        + b'x = """'
        + closer
        + b"\n"
        + (AGENT + TAIL).encode(cookie)
    )


HOSTILE = {
    # the bytes hold no quote: UTF-7 spells three of them in base64
    "utf-7-quotes": (b'# coding: utf-7\nx = """+ACIAIgAi-\n' + AGENT.encode() + TAIL.encode()),
    # no `claude` byte in the file: UTF-7 spells the `c`
    "utf-7-name": b"#!/usr/bin/env python\n# coding: utf-7\n"
    + AGENT.replace("claude_agent_sdk", "+AGM-laude_agent_sdk").encode(),
    # a character whose second byte is a backslash, then the closing quotes
    "shift_jis": _hidden("shift_jis", "表".encode("shift_jis") + b'"""'),
    "cp932": _hidden("cp932", "表".encode("cp932") + b'"""'),
    "big5": _hidden("big5", "功".encode("big5") + b'"""'),
    "gbk": _hidden("gbk", "乗".encode("gbk") + b'"""'),
}


def _findings(repo: Path) -> list[dict[str, Any]]:
    result = CliRunner().invoke(
        app, ["inspect", str(repo), "--format", "json", "--no-lock", "--fail-on", "critical"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["complete"], report["sources"]
    findings: list[dict[str, Any]] = report["findings"]
    return findings


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_file_in_a_declared_encoding_reports_what_its_text_in_utf8_reports(
    tmp_path: Path, name: str
) -> None:
    source = HOSTILE[name]
    encoding = declared_encoding(source)
    assert encoding is not None
    text = source.decode(encoding)
    assert "from claude_agent_sdk import" in text  # (what Python reads)
    hostile, plain = tmp_path / "hostile", tmp_path / "plain"
    for repo, data in ((hostile, source), (plain, text.replace(encoding, "utf-8", 1).encode())):
        repo.mkdir()
        (repo / "agent.py").write_bytes(data)
    expected = _findings(plain)
    assert {f["rule_id"] for f in expected} >= {"AG301", "AG302"}, expected
    assert _findings(hostile) == expected


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_the_file_is_parsed_and_its_agent_found(name: str) -> None:
    source = HOSTILE[name]
    lines = source.decode(declared_encoding(source) or "utf-8").splitlines()
    out = process_file("agent.py", "python", source)
    assert out.parsed == 1
    assert [(s.status.value, s.reason) for s in out.sources] == [("ok", "Python agent code parsed")]
    assert [(c.path, c.line) for c in out.configs] == [
        ("agent.py", lines.index("    options = ClaudeAgentOptions(") + 1)
    ]


@pytest.mark.parametrize(
    ("head", "encoding"),
    [
        (b"# coding: utf-7\n", "utf-7"),
        (b"#!/usr/bin/python\r# vim: set fileencoding=big5 :\r\n", "big5"),
        (b"\n# -*- coding: latin-1 -*-\n", "iso-8859-1"),
        (b"# coding=ISO_8859_1\n", "iso-8859-1"),
        (b"  \x0c# coding: Shift_JIS\n", "Shift_JIS"),
        (b"# coding: utf_8\n", None),
        (b"# coding: UTF-8-sig\n", None),
        (b"x = 1\n# coding: utf-7\n", None),  # (Python reads line 2 only after a comment)
        (b"#\n\n# coding: utf-7\n", None),  # (nor a third line)
        (b'x = "# coding: utf-7"\n', None),
        (b"", None),
    ],
)
def test_the_encoding_is_the_one_python_reads(head: bytes, encoding: str | None) -> None:
    assert declared_encoding(head + b"x = '+ACI-'\n") == encoding
    if encoding is None:
        return
    letter = "é" if encoding in ("utf-7", "iso-8859-1") else "表"
    source = head + f"x = '{letter}'\n".encode(encoding)
    assert as_python_reads(source) == source.decode(encoding).encode()


def test_a_file_python_cannot_decode_is_tested_as_it_is() -> None:
    for source in (b"# coding: no-such-codec\nimport agents\n", b"# coding: ascii\nx = '\xff'\n"):
        assert as_python_reads(source) is source


def test_an_oversize_file_in_another_encoding_may_configure_an_agent(tmp_path: Path) -> None:
    """Over the cap, a file is searched for an SDK's name, not analysed: its bytes are not
    what Python reads, so the search cannot rule it out (a failed source, never skipped)."""
    source = HOSTILE["utf-7-name"] + b"x = 1\n" * 800_000
    (tmp_path / "agent.py").write_bytes(source)
    result = CliRunner().invoke(app, ["inspect", str(tmp_path), "--format", "json", "--no-lock"])
    assert result.exit_code == 3, result.output
    report = json.loads(result.stdout)
    assert [(s["name"], s["status"], s["reason"]) for s in report["sources"][1:]] == [
        (
            "agent.py",
            "failed",
            f"{len(source)} bytes, over the 4194304 byte cap, and it may configure an agent: "
            "not analysed",
        )
    ]
