"""The facts core: frozen records that gatherers fill and rules read.

Gatherers (:mod:`agentguard.inspect`, :mod:`agentguard.lock`, :mod:`agentguard.harden`'s
probes) return these records with their sources' statuses; the engine runs the rules over
them; rules import facts, never a gatherer. This package depends on nothing above it: the
findings model and the two text utilities that keep values safe to show
(:mod:`agentguard.redact`, :mod:`agentguard.secret_text`).

* :mod:`.pins`, :mod:`.graph`, :mod:`.environments`, :mod:`.lock` -- lock facts
* :mod:`.image` -- image, container and project-file facts
* :mod:`.dockerfile`, :mod:`.compose`, :mod:`.devcontainer`, :mod:`.installs`,
  :mod:`.project`, :mod:`.k8s`, :mod:`.workflows` -- project facts
* :mod:`.values`, :mod:`.agents` -- agent facts
* :mod:`.probe` -- probe facts
"""
