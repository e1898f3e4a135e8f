"""How a cassette problem becomes the failure of a test phase: short text, no internals.

A miss fails the phase it happened in (setup, call or teardown), whatever the code made of it:
raised as is, wrapped by an SDK or the code under test, or caught and swallowed. Under strict,
unused interactions fail the teardown. The failure is a ``pytest.fail(..., pytrace=False)``,
so the report shows the message alone, as pytest shows its own usage errors.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from cassettes_core import CassetteError, CassetteMissError, Interaction
from pytest_plugin._live import CassetteSession

_LEAVE_ALONE = (KeyboardInterrupt, SystemExit, pytest.exit.Exception)


def phase_failure(
    session: CassetteSession, call: pytest.CallInfo[None]
) -> pytest.ExceptionInfo[BaseException] | None:
    """The failure to report for this phase instead of its own outcome, if any."""
    raised = call.excinfo.value if call.excinfo is not None else None
    if isinstance(raised, _LEAVE_ALONE):
        return None
    misses = session.take_misses()
    if misses:
        return _failed(miss_failure(misses, raised))
    if isinstance(raised, CassetteError):  # unsafe write, corrupt file, blocked request
        return _failed(f"{type(raised).__name__}: {raised}")
    if call.when == "teardown" and raised is None:
        unused = session.strict_unused()
        if unused:
            return _failed(unused_failure(session, unused))
    return None


def _failed(text: str) -> pytest.ExceptionInfo[BaseException]:
    try:
        raise pytest.fail.Exception(text, pytrace=False) from None
    except pytest.fail.Exception as exc:
        return pytest.ExceptionInfo.from_exception(exc)


def miss_failure(misses: Sequence[CassetteMissError], raised: BaseException | None) -> str:
    """The failure text of a test whose cassette missed: the misses, then what the test did."""
    parts = [f"CassetteMissError: {miss}" for miss in misses]
    text = "\n\n".join(parts)
    if len(misses) > 1:
        text = f"{len(misses)} cassette misses in this test:\n\n{text}"
    if raised is not None and not _is_one_of(raised, misses):
        kind = type(raised)
        name = (
            kind.__qualname__
            if kind.__module__ == "builtins"
            else (f"{kind.__module__}.{kind.__qualname__}")
        )
        message = str(raised).strip().splitlines()
        first = f": {message[0]}" if message else ""
        text += (
            f"\n\n(the test then failed with {name}{first}; the miss above is the cause: "
            "the SDK or the code under test wrapped or caught it)"
        )
    elif raised is None:
        text += "\n\n(the code under test caught the miss; the plugin fails the test anyway)"
    return text


def _is_one_of(raised: BaseException, misses: Sequence[CassetteMissError]) -> bool:
    # The transport may re-raise a miss as a clone (so that an SDK lets it through).
    return isinstance(raised, CassetteMissError) and any(
        raised is miss or raised.report is miss.report for miss in misses
    )


def unused_failure(session: CassetteSession, unused: Sequence[Interaction]) -> str:
    count = len(unused)
    lines = [
        f"{count} unused interaction{'s' if count != 1 else ''} in {session.path} "
        "(recorded, never played by this test), and strict is on:"
    ]
    for interaction in unused:
        model = f" {interaction.request.model}" if interaction.request.model else ""
        lines.append(f"  seq {interaction.seq}: {interaction.provider}{model}")
    lines.append(
        f"  re-record: {session.spec.command('record')}   "
        "(strict comes from --cassette-strict, the cassette_strict ini option or strict=True)"
    )
    return "\n".join(lines)
