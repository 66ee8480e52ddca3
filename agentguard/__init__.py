"""agentguard: keeps AI-agent containers honest."""

from agentguard import classcode as _classcode
from agentguard import regexcode as _regexcode

_classcode.install()  # (before any record class is made: agentguard/classcode.py)
_regexcode.install()  # (before agentguard's patterns are compiled: agentguard/regexcode.py)

__version__ = "0.1.0"

# The distribution's name on the package index (the command and the import stay
# `agentguard`): `agentguard` itself is crowded there, with many unrelated packages that
# start with it. pyproject.toml, action.yml and the docs' install lines use this name; a test
# holds them together.
DISTRIBUTION = "agent-container-guard"
