"""The options of a recording, typed once: what ``Recorder``, the pytest marker and
``cassette_config`` accept, and the check that turns a bad value into a :class:`ConfigError`.

``RecorderOptions`` is a ``TypedDict``: code that passes options along
(``Recorder(path, **options)``) has a typo caught by the type checker, and
:func:`check_options` catches it at run time for values that come from a marker or a fixture.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypedDict

from cassettes_core._errors import ConfigError
from cassettes_core._record_errors import RECORD_ERRORS, RecordErrors, parse_record_errors
from cassettes_core._request import MatchPolicy

BeforeRecord = Callable[[dict[str, Any]], dict[str, Any] | None]
# The re-record line of a miss, given the mode it should name ("record" or "append").
RerecordHint = Callable[[str], str]

__all__ = [
    "RECORD_ERRORS",
    "BeforeRecord",
    "RecordErrors",
    "RecorderOptions",
    "RerecordHint",
    "check_options",
    "parse_record_errors",
]


class RecorderOptions(TypedDict, total=False):
    """How a recording matches, scrubs and keeps what it sees (every key optional)."""

    policy: MatchPolicy  # which request fields are matched (widen or narrow the defaults)
    repeat_last: bool  # the last recording answers any further identical request
    before_record: BeforeRecord  # scrubs each interaction before it is written
    allow_secrets: tuple[str, ...]  # values the secret guard lets through
    record_errors: RecordErrors  # "useful" (default) or "all"


_BOOLS = ("repeat_last",)


def check_options(options: Mapping[str, object], *, source: str) -> RecorderOptions:
    """``options`` checked value by value, as :class:`RecorderOptions`.

    ``source`` names where they came from in the error (``@pytest.mark.cassette``,
    ``cassette_config``). Keys other than the recorder's are left to the caller (it knows
    which others it takes); ``None`` values are dropped.
    """

    def bad(key: str, wanted: str) -> ConfigError:
        return ConfigError(f"{source}({key}={options[key]!r}): {key} must be {wanted}")

    checked: dict[str, Any] = {}
    for key in _BOOLS:
        if options.get(key) is not None and not isinstance(options[key], bool):
            raise bad(key, "True or False")
    if options.get("policy") is not None and not isinstance(options["policy"], MatchPolicy):
        raise bad("policy", "a cassettes_core.MatchPolicy")
    hook = options.get("before_record")
    if hook is not None and not callable(hook):
        raise bad("before_record", "a callable taking and returning an interaction dict")
    if options.get("record_errors") is not None:
        checked["record_errors"] = parse_record_errors(
            options["record_errors"], source=f"{source}(record_errors)"
        )
    allow = options.get("allow_secrets")
    if allow is not None:
        if isinstance(allow, str) or not isinstance(allow, Iterable):
            raise bad("allow_secrets", "a list of strings")
        values = tuple(allow)
        if not all(isinstance(v, str) for v in values):
            raise bad("allow_secrets", "a list of strings")
        checked["allow_secrets"] = values
    for key in ("policy", "repeat_last", "before_record"):
        if options.get(key) is not None:
            checked[key] = options[key]
    result: RecorderOptions = {}
    result.update(checked)  # type: ignore[typeddict-item]
    return result
