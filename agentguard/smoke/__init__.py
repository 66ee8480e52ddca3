"""The smoke run (``lock --smoke``, ``check --smoke``): the locked environment installed into
a scratch folder and started, to see the incident itself rather than its forecast.

:mod:`.install` builds the scratch environment, :mod:`.targets` reads what the project
starts, :mod:`.probe_child` runs in the scratch interpreter (never in agentguard's own),
:mod:`.stdio` speaks MCP to the stdio servers, :mod:`.run` puts it together and
:mod:`.facts` holds what the AG6xx rules read. See docs/smoke.md.
"""
