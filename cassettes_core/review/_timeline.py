"""A cassette as a reader sees it: one :class:`Entry` per interaction, in seq order (data),
and as terminal text: one block per interaction, folded to the width given.

Each interaction is read through its provider's catalog reader (the last user turn, the answer
text and tool calls, a stream assembled). Cassette text is shown as text, never obeyed: control
characters (an ANSI escape that would recolour or clear the terminal, a carriage return that
would overwrite a line) and the Unicode controls that reorder what follows them (bidi overrides
and isolates) are shown as escapes such as ``\\x1b`` and ``\\u202e``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from cassettes_core import catalog
from cassettes_core._model import Interaction
from cassettes_core.catalog import Said, ToolCall, as_json
from cassettes_core.usage import usage_of

Outcome = Literal["answer", "stream", "error"]


@dataclass(frozen=True)
class Entry:
    """One interaction, read: who was asked what, and what came back."""

    seq: int
    provider: str
    model: str | None
    endpoint: str | None
    digest: str
    duration_ms: int
    outcome: Outcome
    question: Said
    answer: Said
    input_tokens: int
    output_tokens: int
    status: int | None = None
    events: int | None = None  # a stream: how many events it had
    error: str | None = None  # the failure, as one line
    system: str | None = None  # the system prompt
    system_is_new: bool = True  # False: the same as the previous interaction's

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` form of one entry (in ``show --json``'s versioned report)."""
        return {
            "seq": self.seq,
            "provider": self.provider,
            "model": self.model,
            "endpoint": self.endpoint,
            "digest": self.digest,
            "duration_ms": self.duration_ms,
            "outcome": self.outcome,
            "status": self.status,
            "system": self.system,
            "asked": _said_json(self.question),
            "answer": _said_json(self.answer),
            "stream_events": self.events,
            "error": self.error,
            "tokens": {"input": self.input_tokens, "output": self.output_tokens},
        }


def _said_json(said: Said) -> dict[str, Any]:
    return {
        "text": said.text,
        "tool_calls": [_call_json(call) for call in said.tool_calls],
        "tool_results": [{"id": key, "content": value} for key, value in said.tool_results],
        "shape_known": said.known,
    }


def _call_json(call: ToolCall) -> dict[str, str]:
    return {"name": call.name, "arguments": call.arguments}


def entry_of(interaction: Interaction, *, previous_system: str | None = None) -> Entry:
    """Read one interaction through its provider's catalog reader (by shape when unknown)."""
    request = interaction.request
    reader = catalog.reader_for(interaction.provider)
    body = request.body()
    system = reader.instructions(body)
    usage = usage_of(interaction)
    question = reader.asked(body)
    status: int | None = None
    events: int | None = None
    error: str | None = None
    answer = Said()
    outcome: Outcome
    if interaction.stream is not None:
        outcome = "stream"
        events = len(interaction.stream)
        answer = reader.streamed([event.data for event in interaction.stream])
    elif interaction.response is not None:
        outcome = "answer"
        status = interaction.response.status
        answer = reader.answered(interaction.response.body)
    else:
        outcome = "error"
    if interaction.error is not None:
        failure = interaction.error
        status = failure.status if failure.status is not None else status
        if failure.kind == "http_status":
            error = f"HTTP {failure.status}"
            if failure.body is not None:
                error += f": {_error_text(failure.body)}"
        else:
            error = failure.kind + (f" ({failure.message})" if failure.message else "")
        if outcome == "stream":
            count = "1 event" if events == 1 else f"{events} events"
            error = f"the stream failed after {count}: {error}"
    return Entry(
        seq=interaction.seq,
        provider=interaction.provider,
        model=request.model,
        endpoint=interaction.endpoint,
        digest=interaction.digest,
        duration_ms=interaction.duration_ms,
        outcome=outcome,
        question=question,
        answer=answer,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        status=status,
        events=events,
        error=error,
        system=system,
        system_is_new=system != previous_system,
    )


def _error_text(body: Any) -> str:
    # The providers' error envelopes: {"error": {"message": …}} (OpenAI, Anthropic).
    inner = body.get("error") if isinstance(body, dict) else None
    if isinstance(inner, dict) and isinstance(inner.get("message"), str):
        kind = inner.get("type")
        return f"{inner['message']}" + (f" ({kind})" if isinstance(kind, str) else "")
    return as_json(body)


def timeline(interactions: Sequence[Interaction]) -> list[Entry]:
    """The entries of ``interactions`` in seq order."""
    chosen = sorted(interactions, key=lambda i: i.seq)
    entries: list[Entry] = []
    previous: str | None = None
    for interaction in chosen:
        entries.append(entry_of(interaction, previous_system=previous))
        previous = entries[-1].system
    return entries


# C0 and C1 controls but tab and newline; bidi embeddings, overrides, isolates and marks;
# zero-width and line/paragraph separators, the byte-order mark.
_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]"
)
FOLDED_LINES = 6  # lines of one text shown without --full
_LABEL = 8  # width of the label column


def printable(text: str) -> str:
    """``text`` with every character that could act on a terminal or reorder text escaped."""
    return _UNSAFE.sub(_escape, text)


def _escape(found: re.Match[str]) -> str:
    code = ord(found.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


Style = Callable[[str, str], str]


def _plain(text: str, code: str) -> str:
    return text


def tokens_text(entry: Entry) -> str:
    if not entry.tokens:
        return "no tokens reported"
    return f"{entry.tokens} tokens ({entry.input_tokens} in, {entry.output_tokens} out)"


def heading(entry: Entry) -> str:
    parts = [entry.provider]
    # A tool or MCP call asks no model and spends no tokens: its heading does not say so.
    if catalog.reader_for(entry.provider).calls == "model" or entry.model:
        parts += [entry.model or "no model", tokens_text(entry)]
    parts += [f"{entry.duration_ms} ms", entry.digest[:12]]
    return " · ".join(printable(p) for p in parts)


def render_entry(
    entry: Entry, *, width: int, full: bool = False, style: Style = _plain
) -> Iterator[str]:
    """The lines of one interaction's block."""
    seq = f"#{entry.seq}"
    head = fold(f"{seq} {heading(entry)}", width)
    yield style(seq, "1") + head[0][len(seq) :]
    for line in head[1:]:
        yield " " * 3 + line if len(line) + 3 <= width else line
    if entry.system and entry.system_is_new:
        yield from _field("system", entry.system, width, full, style)
    yield from _said_lines("asked", entry.question, width, full, style)
    if entry.outcome == "stream":
        yield from _field("stream", f"{entry.events} events, assembled:", width, full, style)
    if entry.outcome != "error" or entry.answer.text or entry.answer.tool_calls:
        yield from _said_lines("answer", entry.answer, width, full, style)
    if entry.error is not None:
        yield from _field(style("error", "31"), entry.error, width, full, style, label_width=5)


def _said_lines(label: str, said: Said, width: int, full: bool, style: Style) -> Iterator[str]:
    shown = False
    for key, content in said.tool_results:
        yield from _field("result", f"{key}: {content}" if key else content, width, full, style)
        shown = True
    if said.text:
        name = label if said.known else f"{label} (JSON)"
        yield from _field(name, said.text, width, full, style)
        shown = True
    for call in said.tool_calls:
        yield from _field("tool", f"{call.name}({call.arguments})", width, full, style)
        shown = True
    if not shown:
        yield from _field(label, "(nothing to show)", width, full, style)


def _field(
    label: str,
    text: str,
    width: int,
    full: bool,
    style: Style,
    *,
    label_width: int | None = None,
) -> Iterator[str]:
    shown_width = label_width if label_width is not None else len(label)
    pad = " " * max(1, _LABEL - shown_width)
    indent = " " * (3 + _LABEL)
    lines = fold(printable(text), width - len(indent))
    limit = len(lines) if full else FOLDED_LINES
    for n, line in enumerate(lines[:limit]):
        yield (f"   {style(label, '2')}{pad}" if n == 0 else indent) + line
    if len(lines) > limit:
        yield f"{indent}… {len(lines) - limit} more lines (--full shows them)"[: max(width, 40)]


def columns(text: str) -> int:
    """How many terminal columns ``text`` takes: wide (CJK, emoji) characters two, combining
    marks none."""
    if text.isascii():
        return len(text)
    return sum(_char_columns(c) for c in text)


def _char_columns(char: str) -> int:
    if unicodedata.combining(char):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def _cut(word: str, width: int) -> tuple[str, str]:
    """The longest head of ``word`` that fits ``width`` columns (at least one character)."""
    used = 0
    for n, char in enumerate(word):
        used += _char_columns(char)
        if used > width:
            return word[: max(n, 1)], word[max(n, 1) :]
    return word, ""


def fold(text: str, width: int) -> list[str]:
    """``text`` wrapped to ``width`` terminal columns, its own line breaks kept, long words cut.

    Greedy, word by word (a 1,000-interaction timeline folds megabytes of text: textwrap's
    regular expressions cost several times more for the same lines).
    """
    width = max(20, width)
    lines: list[str] = []
    for paragraph in text.expandtabs(4).split("\n"):
        if columns(paragraph) <= width:
            lines.append(paragraph.rstrip())
            continue
        line, used = "", 0
        for whole in paragraph.split():
            word, size = whole, columns(whole)
            while size > width:  # a word longer than the line: cut it
                if line:
                    lines.append(line)
                    line, used = "", 0
                head, word = _cut(word, width)
                lines.append(head)
                size = columns(word)
            if not line:
                line, used = word, size
            elif used + 1 + size <= width:
                line, used = f"{line} {word}", used + 1 + size
            else:
                lines.append(line)
                line, used = word, size
        lines.append(line)
    while len(lines) > 1 and not lines[-1]:
        lines.pop()
    return lines


def render_timeline(
    entries: Sequence[Entry], *, width: int, full: bool = False, style: Style = _plain
) -> Iterator[str]:
    for n, entry in enumerate(entries):
        if n:
            yield ""
        yield from render_entry(entry, width=width, full=full, style=style)
