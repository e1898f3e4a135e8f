"""How a botocore send failure is recorded: a timeout, a lost connection, or not at all."""

from __future__ import annotations

from cassettes_core._model import RecordedError
from cassettes_core.transport._wire import failure_message


def failure_kind(exc: BaseException) -> str | None:
    """How a botocore send failure is recorded: ``timeout``, ``connection``, or not at all."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    if "ReadTimeoutError" in names or "ConnectTimeoutError" in names:
        return "timeout"
    if names & {"EndpointConnectionError", "ConnectionClosedError", "ConnectionError"}:
        return "connection"
    return None


def recorded_failure(exc: BaseException) -> RecordedError | None:
    kind = failure_kind(exc)
    if kind is None:
        return None
    return RecordedError(kind=kind, message=failure_message(exc))  # type: ignore[arg-type]
