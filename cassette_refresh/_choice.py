"""What a model chose to do in an answer: the tools it called, by name, whether it refused, or
neither (it answered).

A test is written against the recorded choice: it reads ``tool_calls[0]``, or the text. A live
answer that chose otherwise (text where a tool call was recorded, another tool) has the same
shape for the drift check, but written into the cassette it would make the test fail on its
next run; so would a refusal (chat ``message.refusal``, a Responses ``refusal`` part, Anthropic's
``stop_reason: refusal``) where the recording answered. So ``--write`` keeps such an answer as
recorded, and says so. Text that comes with a tool call (a preamble) and reasoning or thinking
items are not a choice: they come and go.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# Output items and content blocks that call a tool (Responses, Anthropic).
TOOL_ITEMS = frozenset({"function_call", "custom_tool_call", "tool_use", "server_tool_use"})


def tools_called(answer: Any) -> frozenset[str]:
    """The names of the tools an answer (a JSON body, or a stream's event payloads) calls."""
    names: set[str] = set()
    todo = [answer]
    while todo:
        node = todo.pop()
        if isinstance(node, Mapping):
            name = node.get("name")
            if node.get("type") in TOOL_ITEMS and isinstance(name, str):
                names.add(name)
            for key in ("function", "function_call"):  # a chat tool call; the legacy field
                called = node.get(key)
                addressed = key == "function_call" or "id" in node or "index" in node
                if (
                    addressed
                    and isinstance(called, Mapping)
                    and isinstance(called.get("name"), str)
                ):
                    names.add(called["name"])
            todo.extend(node.values())
        elif isinstance(node, list | tuple):
            todo.extend(node)
    return frozenset(names)


def refused(answer: Any) -> bool:
    """Whether an answer (a JSON body, or a stream's event payloads) is a refusal."""
    todo = [answer]
    while todo:
        node = todo.pop()
        if isinstance(node, Mapping):
            refusal = node.get("refusal")
            if isinstance(refusal, str) and refusal.strip():
                return True
            if node.get("type") == "refusal" or node.get("stop_reason") == "refusal":
                return True
            todo.extend(node.values())
        elif isinstance(node, list | tuple):
            todo.extend(node)
    return False


Choice = tuple[frozenset[str], bool]


def choice_of(answer: Any) -> Choice:
    return tools_called(answer), refused(answer)


def describe(choice: Choice) -> str:
    names, refusal = choice
    made = [f"a call to {', '.join(sorted(names))}"] if names else []
    made += ["a refusal"] if refusal else []
    return " and ".join(made) or "an answer without tool calls"


def another_choice(recorded: Any, live: Any) -> str | None:
    """Why ``live`` chose otherwise than ``recorded``; ``None`` when they chose alike."""
    before, after = choice_of(recorded), choice_of(live)
    if before == after:
        return None
    return (
        f"the live answer made another choice ({describe(after)}; recorded: "
        f"{describe(before)}), which its test was not written for: re-record it by running "
        "its test if the new choice is right"
    )
