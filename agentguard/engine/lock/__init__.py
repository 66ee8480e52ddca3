"""The lock command's flows: they hand the inputs to the resolver or read the project's
own lock (:mod:`agentguard.lock`'s gatherers), then gate and judge what came back with the
AG1xx and AG14x rules, and write the lock files only when nothing blocks."""
