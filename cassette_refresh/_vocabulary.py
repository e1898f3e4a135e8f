"""What the classifier knows about the providers beyond the recording.

``BEHAVIOUR_PATHS`` are paths whose presence depends on what the model chose to do (a tool call,
logprobs): their appearing or vanishing is noted, never drift. ``KNOWN_VALUES`` are long-documented
enum values, by key name or by full path: seeing one live for the first time (``length`` where the
recording only had ``stop``) is behaviour, not drift. Values added to the APIs since mid-2024
(``pause_turn``, ``refusal``, ``thinking`` blocks …) are deliberately *not* listed: their first
sighting is what the drift check exists to report.
"""

from __future__ import annotations

from collections.abc import Mapping

from cassette_refresh._skeleton import EVENT_PATH

# Paths whose presence depends on what the model chose to do, not on the wire format.
BEHAVIOUR_PATHS: frozenset[str] = frozenset(
    {
        "choices[].message.tool_calls",
        "choices[].message.function_call",
        "choices[].message.audio",
        "choices[].logprobs",
        "stream[chunk].choices[].delta.tool_calls",
        "stream[chunk].choices[].delta.function_call",
        "stream[chunk].choices[].logprobs",
    }
)

# Long-documented values: seeing one live for the first time is behaviour, not drift.
KNOWN_VALUES: Mapping[str, frozenset[str]] = {
    "finish_reason": frozenset({"stop", "length", "tool_calls", "content_filter", "function_call"}),
    "stop_reason": frozenset({"end_turn", "max_tokens", "stop_sequence", "tool_use"}),
    "role": frozenset({"system", "developer", "user", "assistant", "tool", "function"}),
    "status": frozenset(
        {"completed", "incomplete", "in_progress", "failed", "cancelled", "queued"}
    ),
    "content[].type": frozenset({"text", "tool_use"}),
    "stream[content_block_start].content_block.type": frozenset({"text", "tool_use"}),
    "stream[content_block_delta].delta.type": frozenset({"text_delta", "input_json_delta"}),
    "output[].type": frozenset({"message", "function_call", "reasoning"}),
    "output[].content[].type": frozenset({"output_text", "refusal"}),
    EVENT_PATH: frozenset(
        {
            "chunk",
            "error",
            "ping",
            "message_start",
            "message_delta",
            "message_stop",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "response.created",
            "response.in_progress",
            "response.completed",
            "response.incomplete",
            "response.failed",
            "response.output_item.added",
            "response.output_item.done",
            "response.content_part.added",
            "response.content_part.done",
            "response.output_text.delta",
            "response.output_text.done",
            "response.function_call_arguments.delta",
            "response.function_call_arguments.done",
        }
    ),
}
