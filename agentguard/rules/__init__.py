"""Rule families. Importing this package registers every rule.

Ids: AG1xx dependencies, AG2xx mounts and working directory, AG3xx agent tools and
configuration, AG4xx container hardening, AG5xx the hardened configuration at run time. An id never changes meaning and is never reused.
"""

from agentguard.rules import (
    agent_tools,  # noqa: F401
    agent_workdir,  # noqa: F401
    buildfiles,  # noqa: F401
    deps,  # noqa: F401
    hardening,  # noqa: F401
    installed,  # noqa: F401
    mounts,  # noqa: F401
    runtime,  # noqa: F401
)
