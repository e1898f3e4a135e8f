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
from typing import Any, TypeVar, cast

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


# -- SDKs that retry every exception ----------------------------------------------------
# ``groq`` 1.x catches *every* exception its HTTP client raises (``except Exception``), sleeps,
# retries twice and then raises ``APIConnectionError``: no class of ours escapes that. Its
# retry loop does let through anything ``response.raise_for_status()`` raises other than
# ``HTTPStatusError``, so for requests it sends our error is handed back inside a response
# whose ``raise_for_status`` raises it: the user sees the miss itself, on the first attempt.
_RETRIES_EVERYTHING = ("groq/python",)


def retries_everything(headers: Mapping[str, str] | None) -> bool:
    """Whether the SDK that sent a request retries every exception (by its user agent)."""
    if headers is None:
        return False
    agent = str(headers.get("user-agent", "")).lower()
    return any(name in agent for name in _RETRIES_EVERYTHING)


def failing_response(error: CassetteError, request: Any) -> Any:
    """A response (of the request's own HTTP library) that raises ``error`` when checked."""
    library = sys.modules[type(request).__module__.partition(".")[0]]
    response = _failing_class(library)(
        200, headers={"content-type": "application/json"}, content=b"{}", request=request
    )
    response.cassette_error = error
    return response


_FAILING: dict[str, type] = {}


def _failing_class(library: Any) -> type:
    known = _FAILING.get(library.__name__)
    if known is not None:
        return known

    def raise_for_status(self: Any) -> Any:
        raise self.cassette_error

    made = type(
        "CassetteErrorResponse",
        (library.Response,),
        {
            "__module__": __name__,
            "__doc__": "Carries a cassette error to an SDK that retries every exception.",
            "raise_for_status": raise_for_status,
        },
    )
    return _FAILING.setdefault(library.__name__, made)
