"""A small tool-calling agent over the real openai SDK, for the agent-replay tests.

Each turn asks the model with the tools offered, forcing the turn's tool (the emulator calls
the tool it is offered), runs the tool the model asked for, and asks again with its result:
two model calls and one tool call per turn, in that order.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import openai

MODEL = "gpt-4o-mini"


def spec(name: str, *params: str) -> dict[str, Any]:
    """An OpenAI function tool of string parameters."""
    properties = {p: {"type": "string"} for p in params}
    return {
        "type": "function",
        "function": {
            "name": name,
            "parameters": {"type": "object", "properties": properties, "required": list(params)},
        },
    }


def run_turns(
    client: openai.OpenAI,
    turns: Sequence[tuple[str, str]],
    tools: dict[str, Callable[..., Any]],
    specs: Sequence[dict[str, Any]],
) -> list[str]:
    """Ask each ``(question, tool name)`` turn in one conversation; the final answers."""
    create: Any = client.chat.completions.create  # messages built as plain dicts
    messages: list[Any] = []
    answers: list[str] = []
    for question, forced in turns:
        messages.append({"role": "user", "content": question})
        choice = {"type": "function", "function": {"name": forced}}
        reply = create(model=MODEL, messages=messages, tools=list(specs), tool_choice=choice)
        message = reply.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls or []:
            function = getattr(call, "function", None)
            assert function is not None
            result = tools[function.name](**json.loads(function.arguments))
            messages.append(
                {"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)}
            )
        final = create(model=MODEL, messages=messages, tools=list(specs))
        text = final.choices[0].message.content or ""
        messages.append({"role": "assistant", "content": text})
        answers.append(text)
    return answers
