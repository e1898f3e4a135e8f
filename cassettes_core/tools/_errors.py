"""The errors and the warning a tool call can end in, beside the core's own.

``RecordedToolError`` stands in for a recorded exception whose class cannot be rebuilt in
replay; ``ToolResultChangedError`` is what a ``safe`` tool whose result changed leaves in the
recorder's log (the warning says it at once; ``--cassette-strict`` fails the test with it).
"""

from __future__ import annotations

from typing import Any

from cassettes_core._errors import CassetteError


class RecordedToolError(CassetteError):
    """A tool raised an exception when it was recorded, and replay cannot rebuild its class
    (it cannot be imported here, or not built from its recorded arguments)."""

    def __init__(self, tool: str, type_name: str, message: str, why: str) -> None:
        self.tool = tool
        self.type_name = type_name
        self.message = message
        self.why = why
        super().__init__(str(self))

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.tool, self.type_name, self.message, self.why))

    def __str__(self) -> str:
        return (
            f"tool {self.tool} raised {self.type_name} when it was recorded: {self.message}\n"
            f"  replayed as RecordedToolError: {self.why}\n"
            f"TIP: catch RecordedToolError (its type_name is {self.type_name!r}), or make the "
            "exception class importable and buildable from its args."
        )


class ToolResultChangedError(CassetteError):
    """A ``safe`` tool ran again in replay and returned something else than its recording."""

    def __init__(self, tool: str, seq: int, recorded: Any, now: Any, path: str) -> None:
        self.tool = tool
        self.seq = seq
        self.recorded = recorded
        self.now = now
        self.path = path
        super().__init__(str(self))

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.tool, self.seq, self.recorded, self.now, self.path))

    def __str__(self) -> str:
        return (
            f"safe tool {self.tool} returned another result than its recording (seq "
            f"{self.seq} of {self.path}): recorded {_short(self.recorded)}, now "
            f"{_short(self.now)}\n"
            "TIP: the answer the model saw was recorded with the old result; re-record "
            "(CASSETTE_MODE=record) if the change is expected, or make the tool "
            "deterministic."
        )


class ToolResultChangedWarning(UserWarning):
    """A ``safe`` tool's result in replay differs from its recording (see the summary)."""


def _short(value: Any, limit: int = 120) -> str:
    # The message lands in CI logs: a key the new result carries is masked as findings are.
    from cassettes_core.secrets import redact

    text = redact(repr(value))
    return text if len(text) <= limit else text[: limit - 1] + "…"
