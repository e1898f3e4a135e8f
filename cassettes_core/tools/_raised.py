"""A tool's exception as a cassette keeps it, and raised again from there.

Kept: the class's importable name, its ``args`` when they are plain data, and its message.
Replay finds the class in a module already loaded (a cassette never makes us import one) and
builds it from the args (else from the message); a class that cannot be found or built
replays as :class:`RecordedToolError` naming it.
"""

from __future__ import annotations

import sys
from typing import Any

from cassettes_core._model import RecordedError
from cassettes_core.tools._errors import RecordedToolError
from cassettes_core.tools._values import storable_problem

EXCEPTION_KIND = "exception"


def recorded_exception(exc: BaseException) -> RecordedError:
    kind = type(exc)
    name = f"{kind.__module__}.{kind.__qualname__}"
    args: Any = list(exc.args)
    body: dict[str, Any] = {"type": name}
    if storable_problem(args, "args", 0) is None:
        body["args"] = args
    return RecordedError(
        kind="exception",
        message=f"{name}: {exc}",
        body=body,
    )


def is_recorded_exception(error: RecordedError) -> bool:
    return error.kind == EXCEPTION_KIND


def rebuilt_exception(tool: str, error: RecordedError) -> BaseException:
    """The exception to raise for ``error``: the recorded class, or RecordedToolError."""
    body = error.body if isinstance(error.body, dict) else {}
    name = body.get("type")
    type_name = name if isinstance(name, str) else "an unknown exception"
    prefix = f"{type_name}: "
    message = error.message[len(prefix) :] if error.message.startswith(prefix) else error.message
    if not isinstance(name, str):
        return RecordedToolError(tool, type_name, message, "the recording names no class")
    kind = _import_class(name)
    if kind is None:
        return RecordedToolError(
            tool, name, message, f"{name} is not a class of a module loaded here"
        )
    args = body.get("args")
    attempts = [tuple(args)] if isinstance(args, list) else []
    attempts.append((message,))
    for attempt in attempts:
        built = _build(kind, attempt)
        if built is not None:
            return built
    return RecordedToolError(tool, name, message, f"{name} cannot be built from its args")


def _build(kind: type[BaseException], args: tuple[Any, ...]) -> BaseException | None:
    try:
        return kind(*args)
    except Exception:  # a class whose constructor takes other arguments
        return None


def _import_class(name: str) -> type[BaseException] | None:
    parts = name.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        # Only a module loaded already: a cassette is data, and naming a module in it must
        # not run that module's import (a tool's own module is loaded when it is called).
        target: Any = sys.modules.get(".".join(parts[:cut]))
        if target is None:
            continue
        for attribute in parts[cut:]:
            target = getattr(target, attribute, None)
            if target is None:
                return None
        if isinstance(target, type) and issubclass(target, BaseException):
            return target
        return None
    return None
