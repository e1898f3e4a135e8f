"""Our errors, raised inside a transport, must reach the user as themselves, at once.

``openai`` lets a foreign exception from its HTTP client through unchanged and does not retry
it. ``anthropic`` wraps every exception that is not an ``AnthropicError`` in
``APIConnectionError`` and retries it (about 1.5 s of sleeps by default), so a cassette miss
would surface as "Connection error." after three identical misses. For requests the anthropic
SDK sends, we therefore raise a subclass of *both* our error class and
``anthropic.AnthropicError``: the SDK re-raises its own errors unwrapped and never retries them
(``_should_retry_exception`` only retries connection, timeout, status and ``RetryableError``s),
so ``except CassetteMissError`` and ``pytest.raises(CassetteMissError)`` see the miss, its
message and its ``report`` on the first attempt.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import TypeVar, cast

from cassettes_core import catalog
from cassettes_core._errors import CassetteError

E = TypeVar("E", bound=CassetteError)


def sent_by_anthropic(provider: str | None, headers: Mapping[str, str]) -> bool:
    """Whether a request comes from the anthropic SDK (its route, or its user agent)."""
    endpoint = catalog.current().get(provider) if provider is not None else None
    if endpoint is not None and endpoint.family == "anthropic":
        return True
    agent = headers.get("user-agent", "").lower()
    # Anthropic, AnthropicBedrock, AnthropicVertex: "<client class>/Python <version>".
    return "anthropic/python" in agent or (agent.startswith("anthropic") and "/python" in agent)


def visible(error: CassetteError, *, anthropic_caller: bool) -> CassetteError:
    """``error`` as the SDK that sent the request will let it through (see module doc)."""
    base = _anthropic_error() if anthropic_caller else None
    if base is None or isinstance(error, base):
        return error
    cls = _mixed(type(error), base)
    clone = cls.__new__(cls)
    clone.__dict__.update(error.__dict__)
    clone.args = error.args
    return clone


def visible_type(ours: type[E], *, anthropic_caller: bool) -> type[E]:
    """The class to build one of our errors in, so that the SDK that sent the request lets it
    through (see module doc): ``ours`` itself, or its mix with ``anthropic.AnthropicError``."""
    base = _anthropic_error() if anthropic_caller else None
    if base is None or issubclass(ours, base):
        return ours
    return cast("type[E]", _mixed(ours, base))


def _anthropic_error() -> type[Exception] | None:
    # Only when the SDK is already loaded: the transport never imports a provider SDK.
    module = sys.modules.get("anthropic")
    base = getattr(module, "AnthropicError", None) if module is not None else None
    return base if isinstance(base, type) and issubclass(base, Exception) else None


_MIXED: dict[tuple[type, type], type[CassetteError]] = {}


def _mixed(ours: type[CassetteError], theirs: type[Exception]) -> type[CassetteError]:
    known = _MIXED.get((ours, theirs))
    if known is not None:
        return known
    mixed: type[CassetteError] = type(
        ours.__name__,
        (ours, theirs),
        {
            "__module__": __name__,
            "__doc__": f"{ours.__name__} that the anthropic SDK re-raises without retrying.",
        },
    )
    return _MIXED.setdefault((ours, theirs), mixed)
