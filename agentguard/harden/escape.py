"""Text from the target (file names, labels, finding locations) placed into harden's
generated files, made inert there.

A file name is attacker-chosen: holding a newline it would end a ``#`` comment in a
shell script and start a command; holding ``\"\"\"`` it would end a Python docstring and
start code that runs when the hardened file is run. Every header and docstring line
built from target data goes through one of these.
"""

from __future__ import annotations

from agentguard import redact
from agentguard.report.text import visible


def comment(text: str) -> str:
    """One line of a ``#`` comment (shell, Python, YAML, requirements): control characters
    (newlines among them) shown as escapes, secrets redacted."""
    return visible(redact.text(text))


def docstring(text: str) -> str:
    """Text inside a ``\"\"\"`` Python docstring: as :func:`comment`, and every backslash
    and double quote escaped (no closing quotes, no invalid escape sequence)."""
    return comment(text).replace("\\", "\\\\").replace('"', '\\"')
