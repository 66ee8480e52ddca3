#!/bin/sh
# agentguard harden: docker run for codex, made from tests/fixtures/AG305/fail/codex-sh-c-compose (project).
# Read SUMMARY.md beside this file: what changed and why, finding by finding.
set -eu
exec docker run \
  --rm \
  --user 10001:10001 \
  --read-only \
  --tmpfs /work:rw,nosuid,nodev,size=64m,mode=0700,uid=10001,gid=10001 \
  --tmpfs /tmp:rw,nosuid,nodev,size=64m,mode=1777 \
  --workdir /work \
  --cap-drop ALL \
  --security-opt no-new-privileges:true \
  --network none \
  --memory 1g \
  --pids-limit 256 \
  --env HOME=/tmp \
  --env OPENAI_API_KEY \
  --env TASK \
  "${AGENT_IMAGE:?build the image of codex and set AGENT_IMAGE}" \
  sh \
  -c \
  'cd /workspace && codex exec --dangerously-bypass-approvals-and-sandbox "$$TASK"'
