"""Response headers: the few a cassette keeps, and the retry hints served on replay.

Kept is an allow-list, not a deny-list: only headers the SDKs or their clients read (content
type, a redirect's location, retry hints, request ids, rate limits, API versions) are
written, so a provider adding a new cookie or organisation header can never leak into a
cassette; the secret guard's own ``is_sensitive_header`` is applied on top. Request headers
are never kept.

Replayed retries must not sleep. Both SDKs read ``retry-after-ms`` before ``retry-after`` and
sleep exactly that long when it is positive, but fall back to their 0.5 s+ exponential backoff
when it is ``0`` (openai 3.57 ``_calculate_retry_timeout`` wants ``0 < delay``, anthropic 2.14
wants ``delay > 0``). So a replayed error answer carries ``retry-after-ms: 1``: the SDK retries
after one millisecond, as often as it did live. ``x-should-retry`` and the recorded
``retry-after`` are served unchanged; only when the recorded hint exceeds two minutes (where
openai refuses to retry at all) is the hint left alone, so the SDK decides as it did live.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

_KEPT = frozenset(
    {
        "content-type",
        "location",  # a redirect the client followed live must lead it to the answer again
        "retry-after",
        "retry-after-ms",
        "x-should-retry",
        "x-request-id",
        "request-id",
        "openai-processing-ms",
        "openai-version",
        "openai-model",
        "anthropic-version",
    }
)
_KEPT_PREFIXES = ("x-ratelimit-", "anthropic-ratelimit-")

REPLAY_RETRY_AFTER_MS = "1"
# openai's MAX_RETRY_AFTER_DELAY: above it the SDK does not retry, so the hint must stay.
_SDK_MAX_RETRY_AFTER_S = 120.0


def kept_headers(headers: Iterable[tuple[str, str]]) -> dict[str, str]:
    """The headers a cassette may hold, names lower-cased, in their original order (a name
    sent more than once holds its values joined by ``", "``)."""
    # The guard's list, loaded on the write path only (as the guard itself is).
    from cassettes_core.secrets import is_sensitive_header

    kept: dict[str, str] = {}
    for raw_name, value in headers:
        name = raw_name.lower()
        if (name in _KEPT or name.startswith(_KEPT_PREFIXES)) and not is_sensitive_header(name):
            # A repeated name keeps every value, joined as the clients' `headers.get` joins
            # them live; the last one alone would replay another header than the SDK read.
            kept[name] = f"{kept[name]}, {value}" if name in kept else value
    return kept


def replay_headers(headers: Mapping[str, str], status: int) -> dict[str, str]:
    """Headers to serve for a replayed answer: the recorded ones, plus a no-sleep retry hint."""
    served = {name.lower(): value for name, value in headers.items()}
    if status < 400:
        return served
    delay = recorded_delay(served)
    if delay is None or delay <= _SDK_MAX_RETRY_AFTER_S:
        served["retry-after-ms"] = REPLAY_RETRY_AFTER_MS
    return served


def recorded_delay(headers: Mapping[str, str]) -> float | None:
    """The retry delay (seconds) a recorded answer asked for, as the SDKs parse it."""
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            delay = float(value) / divisor
        except ValueError:
            continue
        return delay if math.isfinite(delay) else math.inf
    # An HTTP-date `retry-after` in a recording is long past: no SDK would wait for it now.
    return None
