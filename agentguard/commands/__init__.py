"""One module per `agentguard` command: its options and the call into the work; the
application, the shared options and the exit code are in :mod:`agentguard.cli`."""
