"""kontext-bot: answers the team's questions in chat, on the Claude Agent SDK."""
