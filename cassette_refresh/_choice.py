"""What a model chose to do in an answer: the tools it called, by name, whether it refused, or
neither (it answered).

A test is written against the recorded choice: it reads ``tool_calls[0]``, or the text. A live
answer that chose otherwise (text where a tool call was recorded, another tool) has the same
shape for the drift check, but written into the cassette it would make the test fail on its
next run; so would a refusal (chat ``message.refusal``, a Responses ``refusal`` part, Anthropic's
``stop_reason: refusal``) where the recording answered. So ``--write`` keeps such an answer as
recorded, and says so. Text that comes with a tool call (a preamble) and reasoning or thinking
items are not a choice: they come and go. What an answer calls and whether it refuses is
read by the catalog (:func:`cassettes_core.catalog.tools_called`, ``refused``).
"""

from __future__ import annotations

from typing import Any

from cassettes_core.catalog import refused, tools_called

__all__ = ["another_choice", "choice_of", "describe", "refused", "tools_called"]

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
