"""Deterministic answers: what the emulator says is a pure function of the semantic request.

The same model, messages, system prompt and tools always give the same text, tool call and
vector, whatever the temperature or max_tokens; only ids and timestamps are fresh. This is
what lets a test tell a replayed answer from a live one by value, and a cassette miss from a
hit. Every endpoint module reduces its request to a `Turn` and asks `plan_answer`.

A public module of the (test-only) emulator, so that tests can pin the answers it plans.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import struct
from dataclasses import dataclass
from typing import Any, Final

from cassettes_core.testing.emulator._wire import JsonObject

_MAX_QUOTE: Final = 200  # keep answers short however long the prompt is
_WORD: Final = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
_PIECE: Final = re.compile(r"\S+\s*")
_TOKEN: Final = re.compile(r"\w+|[^\w\s]")


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """An offered function tool: its name and JSON schema of arguments."""

    name: str
    schema: JsonObject


@dataclass(frozen=True, slots=True)
class Turn:
    """The provider-neutral question: the last user text and, if any, a tool's result."""

    question: str
    tools: tuple[ToolSpec, ...] = ()
    tool_result: str | None = None  # set when the conversation ends with a tool result
    tool_result_name: str | None = None


@dataclass(frozen=True, slots=True)
class Plan:
    """What to answer: final `text`, or a call of `tool_name` with `arguments`."""

    text: str | None = None
    tool_name: str | None = None
    arguments: JsonObject | None = None

    @property
    def arguments_json(self) -> str:
        """The tool arguments as the compact JSON string the wire carries."""
        return json.dumps(self.arguments or {}, separators=(",", ":"), sort_keys=True)


def fingerprint(semantic: object) -> str:
    """A short stable digest of the semantic request, quoted in answers as `ref`."""
    canonical = json.dumps(semantic, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()[:8]


def text_of(content: object) -> str:
    """Plain text of a message content: a string, or a list of text-bearing parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [text_of(part) for part in content]
        return " ".join(part for part in parts if part)
    if isinstance(content, dict):
        for key in ("text", "content", "output"):
            if key in content:
                return text_of(content[key])
    return ""


def _quote(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _MAX_QUOTE else flat[: _MAX_QUOTE - 1] + "…"


def plan_answer(turn: Turn, *, ref: str) -> Plan:
    """Decide the answer: a tool call when tools are offered to a user turn, else text."""
    question = _quote(turn.question)
    if turn.tool_result is not None:
        tool = turn.tool_result_name or "the tool"
        return Plan(
            text=(
                f"According to {tool}, {_quote(turn.tool_result)}. "
                f"So the answer to '{question}' is 42 (emulator ref {ref})."
            )
        )
    if turn.tools:
        spec = turn.tools[0]
        return Plan(tool_name=spec.name, arguments=tool_arguments(spec.schema, turn.question))
    return Plan(text=f"The answer to '{question}' is 42 (emulator ref {ref}).")


def pick_word(text: str) -> str:
    """The word a tool argument is filled with: the last capitalised word, else the last word."""
    words = _WORD.findall(text)
    if not words:
        return "unknown"
    capitalised = [w for w in words[1:] if w[0].isupper()]
    return str(capitalised[-1] if capitalised else words[-1])


def tool_arguments(schema: object, text: str) -> JsonObject:
    """Arguments for a JSON-schema object, every property filled from `text`."""
    if not isinstance(schema, dict):
        return {}
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return {}
    return {name: _fill(prop, text) for name, prop in properties.items()}


def _fill(prop: object, text: str) -> Any:  # noqa: PLR0911 - one return per JSON type
    if not isinstance(prop, dict):
        return pick_word(text)
    enum = prop.get("enum")
    if isinstance(enum, list) and enum:
        return enum[0]
    kind = prop.get("type")
    if isinstance(kind, list):  # e.g. ["string", "null"]: fill the first non-null type
        kind = next((k for k in kind if k != "null"), "string")
    if kind in ("integer", "number"):
        return 42
    if kind == "boolean":
        return True
    if kind == "array":
        return [_fill(prop.get("items"), text)]
    if kind == "object":
        return tool_arguments(prop, text)
    return pick_word(text)


def count_tokens(text: str) -> int:
    """A stand-in token count: words and punctuation marks, at least one."""
    return max(1, len(_TOKEN.findall(text)))


def text_pieces(text: str) -> list[str]:
    """Split text into word-sized stream deltas that concatenate back to `text`."""
    pieces = _PIECE.findall(text)
    return pieces if "".join(pieces) == text else [text]


def json_pieces(arguments: str, size: int = 8) -> list[str]:
    """Split a JSON string into fixed-size deltas, as providers stream tool arguments."""
    return [arguments[i : i + size] for i in range(0, len(arguments), size)] or [""]


def vector(text: str, *, model: str, dimensions: int) -> list[float]:
    """A unit-length float32 vector seeded by the model and text (same input, same vector)."""
    raw: list[float] = []
    counter = 0
    while len(raw) < dimensions:
        block = hashlib.sha256(f"{model}\x00{text}\x00{counter}".encode()).digest()
        raw.extend((b / 127.5) - 1.0 for b in block)
        counter += 1
    values = raw[:dimensions]
    norm = math.sqrt(sum(v * v for v in values)) or 1.0
    # Round through float32 so the "float" and "base64" encodings carry the same numbers.
    return [struct.unpack("<f", struct.pack("<f", v / norm))[0] for v in values]
