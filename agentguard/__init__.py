"""agentguard: keeps AI-agent containers honest."""

__version__ = "0.1.0"
