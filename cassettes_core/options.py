"""The options of a recording, typed once: what ``Recorder``, the pytest marker and
``cassette_config`` accept.

``RecorderOptions`` is a ``TypedDict``: code that passes options along
(``Recorder(path, **options)``) has a typo caught by the type checker; the pytest plugin
checks the values that come from a marker or a fixture.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypedDict

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
    "parse_record_errors",
]


class RecorderOptions(TypedDict, total=False):
    """How a recording matches, scrubs and keeps what it sees (every key optional)."""

    policy: MatchPolicy  # which request fields are matched (widen or narrow the defaults)
    repeat_last: bool  # the last recording answers any further identical request
    before_record: BeforeRecord  # scrubs each interaction before it is written
    allow_secrets: tuple[str, ...]  # values the secret guard lets through
    record_errors: RecordErrors  # "useful" (default) or "all"
