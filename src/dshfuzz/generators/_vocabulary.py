"""The format-v0 vocabulary the generators speak, with the official constants they must match.

Sources (paths relative to the installed ``@deepseek-ai`` packages):
``KNOWN_SESSION_EVENT_TYPES`` is dsh-session/lib/index.js:1054 (rc.8);
payload members are ``RELEASED_V0_EVENT_DISPOSITIONS`` in
dsh-session-format-v0-to-v1/lib/index.js:27-235; the crash-closer texts are
``interruptedTurnClosers`` in dsh-session/lib/index.js:627-716. Every list is
ordered simplest/most common first, because Hypothesis shrinks toward index 0.

The generators write every type of ``KNOWN_V0_EVENT_TYPES | RELEASED_EXTRA_EVENT_TYPES``;
docs/VOCABULARY.md is the inventory, and tests/conformance/test_generator_vocabulary.py
compares both sets (and every released disposition member) with the installed packages.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "ABORT_CAUSES",
    "CHARS_PER_TOKEN",
    "COMMAND_NAMES",
    "DIALECTS",
    "FAILURE_CODES",
    "FAILURE_EXTRAS",
    "KNOWN_V0_EVENT_TYPES",
    "MODELS",
    "NOT_STARTED_TEXT",
    "OUTCOME_UNKNOWN_TEXT",
    "PLUGIN_EVENT_TYPES",
    "PROVIDER",
    "RELEASED_EXTRA_EVENT_TYPES",
    "SURFACE_TYPES",
    "TITLE_PLUGIN",
    "TOOLS",
    "TURN_END_KINDS",
    "USER_SOURCE_KINDS",
    "WORDS",
    "estimate_content",
]

KNOWN_V0_EVENT_TYPES: frozenset[str] = frozenset(
    [
        "agent-preset/selected",
        "agent/inbox/spliced",
        "approval/asked",
        "approval/decided",
        "approval/policy",
        "assistant/chunk",
        "assistant/message",
        "command/done",
        "command/run",
        "compaction/end",
        "compaction/prune",
        "compaction/start",
        "compaction/summary",
        "feedback/record",
        "goal/change",
        "hook/invoked",
        "hook/result",
        "llm/retry",
        "llm/retry-started",
        "permission/preset",
        "plan/mode",
        "request/context",
        "request/header",
        "sandbox/mode",
        "schedule/change",
        "session/end-seed",
        "session/title",
        "session/title-llm-request",
        "step/end",
        "step/start",
        "subagent/descriptor",
        "team/member",
        "team/message/delivered",
        "team/message/queued",
        "team/task",
        "todo/write",
        "tool-workflow/agent-end",
        "tool-workflow/agent-start",
        "tool-workflow/run-end",
        "tool-workflow/run-start",
        "tool/call",
        "tool/code-dispatch",
        "tool/code-dispatch-start",
        "tool/result",
        "turn/end",
        "turn/start",
        "user/message",
        "web/deepseek-search-llm-request",
    ]
)

# The released-v0 inventory's types outside rc.8's vocabulary (V01:118/129/158): every layer accepts
# them only marked ``ignorable`` (rc.8's loader and released's current restore refuse them otherwise),
# and released's migration then validates their payloads.
RELEASED_EXTRA_EVENT_TYPES: frozenset[str] = frozenset(
    {"model/selection", "session-log-deepseek/delivery-accepted", "subagent/model-selection-policy"}
)

SURFACE_TYPES: frozenset[str] = frozenset({"user/message", "assistant/message", "tool/result"})

# Turn/end reason kinds the released validator knows (V01:1068-1101).
TURN_END_KINDS: tuple[str, ...] = ("completed", "error", "aborted", "interrupted", "max-tokens", "blocked")
ABORT_CAUSES: tuple[str, ...] = ("user", "hook", "parent", "disposed", "legacy")

# User-message source kinds with a released shape (V01:771-917); "user" is what people type.
USER_SOURCE_KINDS: tuple[str, ...] = (
    "user",
    "plugin",
    "coordinator",
    "subagent-settled",
    "subagent-report",
    "agent-instructions",
    "skill-invocation",
    "skill-catalog",
    "goal",
    "team-message",
    "session-reference",
    "webhook",
)

PROVIDER = "deepseek-official"
MODELS: tuple[str, ...] = ("deepseek-v4-flash", "deepseek-v4-pro")

# The tool set the real snapshots advertise (bash, read, write), plus the agent tools seen in them.
TOOLS: tuple[dict[str, Any], ...] = (
    {
        "name": "bash",
        "description": "Run a shell command in the project directory.",
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "string"}, "description": {"type": "string"}},
            "required": ["command"],
        },
    },
    {
        "name": "read",
        "description": "Read a text file.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    },
    {
        "name": "write",
        "description": "Write a text file.",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
            "required": ["path", "content"],
        },
    },
    {
        "name": "subagent",
        "description": "Delegate a task to a subagent.",
        "parameters": {
            "type": "object",
            "properties": {"prompt": {"type": "string"}},
            "required": ["prompt"],
        },
    },
)

DIALECTS: tuple[str, ...] = ("claude-code", "codex")
COMMAND_NAMES: tuple[str, ...] = ("compact", "title", "clear", "model")
FAILURE_CODES: tuple[tuple[str, str], ...] = (
    ("simulated provider error (HTTP 401)", "AUTH"),
    ("provider rate limited the request (HTTP 429)", "RATE_LIMITED"),
    ("snapshot request exceeded the model context window", "CONTEXT_WINDOW_EXCEEDED"),
    ("upstream connection reset", "NETWORK"),
)
# The optional members of an LLM failure (V01:364-378), per FAILURE_CODES entry: HTTP failures carry
# their status, a rate limit the provider's retry-after, the others nothing (the simplest first).
FAILURE_EXTRAS: tuple[dict[str, Any], ...] = (
    {},
    {"status": 429, "providerRetryAfterMs": 1500, "requestId": "req-0001"},
    {"status": 400},
    {},
)
TITLE_PLUGIN = "dsh-session-title-llm"

# Unknown plugin event types a newer harness may write with ``ignorable: true``.
PLUGIN_EVENT_TYPES: tuple[str, ...] = ("x-plugin/telemetry", "x-vendor/usage-report", "x-plugin/checkpoint")

NOT_STARTED_TEXT = (
    "The tool call was interrupted before the Harness recorded it as started. Retry it if it is still needed."
)
OUTCOME_UNKNOWN_TEXT = (
    "The tool call was interrupted after it was recorded, but no result was durably recorded. "
    "Its outcome is unknown. Decide whether to retry from the tool semantics: retry only if the "
    "operation is read-only or idempotent; if it may have side effects, first verify external state "
    "or ask the user. Do not retry blindly."
)

WORDS: tuple[str, ...] = (
    "the",
    "file",
    "read",
    "list",
    "run",
    "test",
    "build",
    "fix",
    "check",
    "open",
    "write",
    "update",
    "code",
    "src",
    "readme",
    "error",
    "output",
    "project",
    "config",
    "module",
    "function",
    "class",
    "value",
    "line",
    "path",
    "result",
    "directory",
    "package",
    "install",
    "import",
    "change",
    "commit",
    "branch",
    "merge",
    "status",
    "report",
    "summary",
    "step",
    "plan",
    "todo",
    "done",
    "ok",
    "alpha",
    "beta",
    "gamma",
)

CHARS_PER_TOKEN = 4
_BLOCK_OVERHEAD = 4


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def estimate_content(blocks: list[dict[str, Any]]) -> int:
    """dsh-token-meter ``estimateContent`` (TM:23-40) for the block kinds the generators emit."""
    tokens = 0
    for block in blocks:
        kind = block["type"]
        if kind in ("text", "reasoning"):
            tokens += _ceil_div(len(block["text"]), CHARS_PER_TOKEN) + _BLOCK_OVERHEAD
        elif kind == "tool-call":
            tokens += (
                _ceil_div(len(block["name"]), CHARS_PER_TOKEN)
                + _ceil_div(len(block["arguments"]), CHARS_PER_TOKEN)
                + _BLOCK_OVERHEAD
            )
        elif kind == "tool-result":
            tokens += estimate_content(block["content"]) + _BLOCK_OVERHEAD
        else:
            tokens += _BLOCK_OVERHEAD + 8
    return tokens
