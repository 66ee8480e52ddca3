"""Rule families. ``load_all()`` (called by ``all_rules()``) registers every rule.

Ids: AG1xx dependencies, AG2xx mounts and working directory, AG3xx agent tools and
configuration, AG4xx container hardening, AG5xx the hardened configuration at run time, AG6xx the locked environment does not start (smoke run). An id never changes meaning and is never reused.
"""

import importlib

# Imported on demand (agentguard.rules.base.all_rules): a command that needs no other
# family's rules (lock) does not pay for importing them all.
FAMILIES = (
    "agent_fallback_paths",
    "smoke",
    "agent_actions",
    "agent_engines",
    "agent_sandbox",
    "agent_tools",
    "agent_workdir",
    "buildfiles",
    "deps",
    "deps_index",
    "hardening",
    "installed",
    "mcp_pins",
    "mcp_tools",
    "mcp_tools_edit",
    "mcp_provenance",
    "mounts",
    "runtime",
    "tool_installs",
)


# Every registered rule id, so that a configuration naming a rule is checked without
# importing every family (tests/test_rule_docs.py keeps it equal to the registry).
RULE_IDS = frozenset(
    {
        *("AG101", "AG102", "AG103", "AG104", "AG105", "AG106", "AG107"),
        *("AG110", "AG111", "AG112", "AG113", "AG120", "AG121", "AG130"),
        *("AG140", "AG141", "AG142", "AG143", "AG144", "AG145", "AG146"),
        *("AG201", "AG202", "AG203", "AG204", "AG210", "AG211", "AG212"),
        *("AG301", "AG302", "AG303", "AG304", "AG305", "AG306", "AG310", "AG320", "AG321"),
        *("AG330", "AG331"),
        *("AG401", "AG402", "AG403", "AG404", "AG405", "AG406", "AG407"),
        "AG501",
        *("AG601", "AG602", "AG603", "AG604", "AG605"),
    }
)


def load_all() -> None:
    for family in FAMILIES:
        importlib.import_module(f"agentguard.rules.{family}")
