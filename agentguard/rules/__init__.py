"""Rule families. ``load_all()`` (called by ``all_rules()``) registers every rule.

Ids: AG1xx dependencies, AG2xx mounts and working directory, AG3xx agent tools and
configuration, AG4xx container hardening, AG5xx the hardened configuration at run time. An id never changes meaning and is never reused.
"""

import importlib

# Imported on demand (agentguard.rules.base.all_rules): a command that needs no other
# family's rules (lock) does not pay for importing them all.
FAMILIES = (
    "agent_tools",
    "agent_workdir",
    "buildfiles",
    "deps",
    "hardening",
    "installed",
    "mounts",
    "runtime",
)


def load_all() -> None:
    for family in FAMILIES:
        importlib.import_module(f"agentguard.rules.{family}")
