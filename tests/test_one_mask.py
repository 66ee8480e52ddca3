"""One mask: every place that masks a known secret value (a build step, a project value, a
command's flag, a Claude variable, the agent's output read back by harden) shows
redact.MASK, the same word the one redactor writes, and never an older spelling."""

from __future__ import annotations

from agentguard import redact
from agentguard.harden.verify_start import _clean
from agentguard.inspect.image.agentconfig import claude_env
from agentguard.inspect.project.model import redact_text, to_json
from agentguard.inspect.summary import redact_argv
from agentguard.rules.secret_values import redact_step

KEY = "sk-ant-api03-" + "a" * 40
M = redact.MASK


def test_the_mask_is_the_redactors() -> None:
    assert redact.mask_value() == M == redact.mask_value(KEY)
    assert redact.text(f"ANTHROPIC_API_KEY={KEY}") == f"ANTHROPIC_API_KEY={M}"


def test_every_masker_shows_the_one_mask() -> None:
    shown = {
        "build step": redact_step(f"/bin/sh -c export ANTHROPIC_API_KEY={KEY} && run"),
        "project value": to_json(KEY),
        "project text": redact_text(f"key {KEY}"),
        "command": " ".join(
            redact_argv(["agent", "--api-key", "abc123", "--token=abc123", KEY]) or []
        ),
        "claude variable": str(claude_env({"ANTHROPIC_BASE_URL": f"https://u:{KEY}@proxy"})),
        "agent output": "\n".join(_clean(f"key={KEY}\nother=xyz987", ["xyz987"])),
    }
    assert shown == {
        "build step": f"/bin/sh -c export ANTHROPIC_API_KEY={M} && run",
        "project value": M,
        "project text": f"key {M}",
        "command": f"agent --api-key {M} --token={M} {M}",
        "claude variable": str([{"name": "ANTHROPIC_BASE_URL", "value": M}]),
        "agent output": f"(a line holding a secret-looking value, not shown)\nother={M}",
    }
    for text in shown.values():
        assert "***" not in text and KEY not in text
        assert redact.text(text) == text  # the redactor leaves the mask as it is
