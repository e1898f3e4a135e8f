"""Re-issuing recorded requests against the live provider.

The check talks to providers through one small seam, :class:`Reissuer`: give it a call (provider,
endpoint, the body that was sent), get back the live answer or a :class:`ProviderError`. The
implementation, :class:`ProviderReissuer`, sends calls through
:class:`~cassettes_core.providers.Provider` objects: the built-in
:class:`~cassettes_core.providers.http.HTTPProvider` ones (what the command uses, made by
:func:`built_in_reissuer`) or your own (gRPC, an in-house gateway). It retries 429 and 5xx
answers (honouring ``retry-after`` and ``retry-after-ms``, up to a cap), timeouts, connection
failures and streams that fail part-way, a few times.

A stream that fails part-way (Anthropic's ``event: error``, a Responses ``response.failed`` or
``error`` event, an OpenAI chunk carrying an ``error`` object) is a failed call, never an answer
to compare: its missing events would read as removed fields.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, Protocol

from cassette_refresh._bedrock import BedrockProvider
from cassettes_core import ConfigError, LLMRequest, ProviderError, catalog
from cassettes_core.providers import Provider
from cassettes_core.providers.http import HTTPProvider, http_module

RETRY_STATUSES: frozenset[int | None] = frozenset({429, 500, 502, 503, 504, 529})
RETRY_KINDS = frozenset({"timeout", "connection"})


@dataclass(frozen=True)
class LiveCall:
    """One recorded request to send again: the body is the semantic fields merged with params."""

    provider: str
    endpoint: str
    body: Mapping[str, Any]
    origin: str = ""
    stream: bool = False


@dataclass(frozen=True)
class LiveAnswer:
    """What the live provider answered: a JSON ``body`` or the parsed SSE ``events``.

    ``event_ms`` holds, when known, each event's offset from the start of the call.
    """

    status: int
    headers: Mapping[str, str] = field(default_factory=dict)
    body: Any = None
    events: tuple[tuple[str | None, Any], ...] | None = None
    duration_ms: int = 0
    event_ms: tuple[int, ...] | None = None


class StreamFailedError(ProviderError):
    """A live stream that started and then reported an error: retried, then "could not check"."""

    def __init__(self, provider: str, event: str, error: Any) -> None:
        self.event = event
        super().__init__("http_status", provider=provider, status=None, body=error)

    def __str__(self) -> str:
        who = self.provider or "provider"
        detail = self.body if isinstance(self.body, str) else repr(self.body)
        if len(detail) > 200:
            detail = detail[:199] + "…"
        return f"{who}: the stream failed part-way ({self.event}: {detail})"


def _error_of(data: Any) -> Any:
    if not isinstance(data, Mapping):
        return data
    response = data.get("response")
    for holder in (data, response if isinstance(response, Mapping) else {}):
        if holder.get("error") is not None:
            return holder["error"]
    return dict(data)


def stream_failure(events: Iterable[tuple[str | None, Any]]) -> tuple[str, Any] | None:
    """The first event saying the stream failed, as (its type, the error), else ``None``."""
    # Stream events that say the stream failed part-way, by the catalog in force now (the
    # built-in ones: Anthropic's and the Responses API's; a registered endpoint's too).
    failed = catalog.current().drift().failure_events
    for name, data in events:
        kind = data.get("type") if isinstance(data, Mapping) else None
        if name in failed or kind in failed:
            return str(name or kind), _error_of(data)
        if isinstance(data, Mapping) and isinstance(data.get("error"), Mapping):
            return str(name or "chunk"), data["error"]
    return None


class Reissuer(Protocol):
    """Sends a recorded request to the live provider.

    ``reissue`` returns the live answer, or raises :class:`ProviderError` (``status`` 401/403
    means the credentials were refused: the whole check stops). ``aclose`` releases connections.
    """

    def supports(self, provider: str) -> bool:
        """Whether calls of ``provider`` can be re-issued (the others are skipped)."""

    async def reissue(self, call: LiveCall) -> LiveAnswer: ...

    async def aclose(self) -> None: ...


def supports(provider: str) -> bool:
    """Whether the built-in re-issuer knows how to reach ``provider`` (a catalog endpoint)."""
    return provider in catalog.current()


def retry_delay(headers: Mapping[str, str], *, attempt: int, cap: float) -> float:
    """Seconds to wait before the next try: ``retry-after-ms``, ``retry-after``, else backoff."""
    lowered = {k.lower(): v for k, v in headers.items()}
    wait: float | None = None
    if "retry-after-ms" in lowered:
        try:
            wait = float(lowered["retry-after-ms"]) / 1000
        except ValueError:
            wait = None
    if wait is None and "retry-after" in lowered:
        value = lowered["retry-after"].strip()
        try:
            wait = float(value)
        except ValueError:
            try:
                when = parsedate_to_datetime(value)
            except (TypeError, ValueError):
                wait = None
            else:
                wait = (when - datetime.now(UTC)).total_seconds()
    if wait is None:
        wait = 0.5 * 2**attempt
    return max(0.0, min(wait, cap))


async def _with_retries(
    send: Callable[[], Awaitable[LiveAnswer]], *, retries: int, cap: float
) -> LiveAnswer:
    """``send()``, again after the advised wait while it fails with a retryable status."""
    attempt = 0
    while True:
        try:
            return await send()
        except ProviderError as exc:
            retryable = (
                exc.status in RETRY_STATUSES
                or exc.kind in RETRY_KINDS
                or isinstance(exc, StreamFailedError)
            )
            if not retryable or attempt >= retries:
                raise
            await asyncio.sleep(retry_delay(exc.headers, attempt=attempt, cap=cap))
            attempt += 1


class ProviderReissuer:
    """A :class:`Reissuer` over :class:`~cassettes_core.providers.Provider` objects, by name.

    For providers of your own (``{"acme.grpc": AcmeProvider()}``) or the built-in HTTP ones
    (``HTTPProvider("openai.chat")``, see :func:`built_in_reissuer`): a recorded stream is
    re-issued with ``astream``, anything else with ``acomplete``. With ``require_json``, an answer
    that is not JSON or a stream without events (a proxy's HTML page, say) is a failed call, not a
    shape to compare.
    """

    def __init__(
        self,
        providers: Mapping[str, Provider],
        *,
        retries: int = 3,
        max_retry_wait: float = 30.0,
        require_json: bool = False,
    ) -> None:
        self.providers = dict(providers)
        self.retries = retries
        self.max_retry_wait = max_retry_wait
        self.require_json = require_json

    def supports(self, provider: str) -> bool:
        return provider in self.providers

    async def aclose(self) -> None:
        """Nothing to release: providers manage their own clients."""

    async def reissue(self, call: LiveCall) -> LiveAnswer:
        provider = self.providers.get(call.provider)
        if provider is None:
            raise ConfigError(f"no provider object given for {call.provider!r}")
        request = LLMRequest.from_body(call.provider, call.body)

        async def send() -> LiveAnswer:
            started = time.monotonic()
            if call.stream:
                events: list[tuple[str | None, Any]] = []
                offsets: list[int] = []
                async for event in provider.astream(request):
                    events.append((event.event, event.data))
                    offsets.append(int((time.monotonic() - started) * 1000))
                took = int((time.monotonic() - started) * 1000)
                if self.require_json and not events:
                    raise _unreadable(call, 200, "an event stream without events")
                failed = stream_failure(events)
                if failed is not None:
                    raise StreamFailedError(call.provider, *failed)
                return LiveAnswer(
                    200, events=tuple(events), duration_ms=took, event_ms=tuple(offsets)
                )
            answer = await provider.acomplete(request)
            took = int((time.monotonic() - started) * 1000)
            if self.require_json and isinstance(answer.body, str):
                raise _unreadable(call, answer.status, f"not JSON: {answer.body[:200]}")
            return LiveAnswer(
                answer.status, dict(answer.headers), body=answer.body, duration_ms=took
            )

        return await _with_retries(send, retries=self.retries, cap=self.max_retry_wait)


def _unreadable(call: LiveCall, status: int, what: str) -> ProviderError:
    return ProviderError("http_status", provider=call.provider, status=status, body=what)


_LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})


def _with_scheme(value: str, default: str) -> str:
    """The base URL a variable gives, read as the provider's SDK reads it: a local server's
    variable (``OLLAMA_HOST``) may be ``host``, ``host:port`` or ``:port``, the scheme, host and
    port of the endpoint's own base filling what is left out, as the ollama SDK takes it. A
    hosted API's variable must be a URL (checked by the caller)."""
    if not value:
        return default
    if "://" in value:
        return value
    http = http_module()
    try:
        base = http.URL(default)
    except (http.InvalidURL, TypeError, ValueError):
        return value
    if base.host not in _LOOPBACK_HOSTS:
        return value
    place, slash, path = value.partition("/")
    if place.startswith("["):  # an IPv6 address, perhaps with a port after it
        address, _, rest = place.partition("]")
        host, port = address + "]", rest.removeprefix(":")
    else:
        host, _, port = place.rpartition(":") if ":" in place else (place, "", "")
    host = host or base.host
    port = port or str(base.port or "")
    netloc = f"{host}:{port}" if port else host
    return f"{base.scheme}://{netloc}{slash}{path}".rstrip("/")


def _check_url(url: str, variable: str, *, example: str) -> None:
    """A base URL the HTTP client can use, or a ConfigError naming the variable."""
    http = http_module()
    try:
        parsed = http.URL(url)
    except (http.InvalidURL, TypeError, ValueError) as exc:
        problem: str | None = str(exc)
    else:
        problem = None if parsed.scheme in {"http", "https"} and parsed.host else "not http(s)"
    if problem is not None:
        raise ConfigError(
            f"{variable}={url!r} is not a usable URL ({problem})\n"
            f"TIP: set {variable} to the API's base, e.g. {example}, "
            "or unset it for the public API."
        )


def built_in_reissuer(
    names: Iterable[str],
    env: Mapping[str, str],
    *,
    timeout: float = 60.0,
    retries: int = 3,
    max_retry_wait: float = 30.0,
) -> ProviderReissuer:
    """A :class:`ProviderReissuer` over the built-in :class:`HTTPProvider` of each name.

    Keys and base URLs come from ``env`` alone (``OPENAI_API_KEY``, ``ANTHROPIC_BASE_URL``…, as
    their :mod:`cassettes_core.catalog` endpoints name them; the public API when no base URL is
    set), checked here: a missing key is a :class:`ConfigError` naming the variable, before any
    call is made.
    """
    providers: dict[str, Provider] = {}
    for name in names:
        route = catalog.current().get(name)
        if route is not None and route.family == "bedrock":  # botocore signs: no key variable
            providers[name] = BedrockProvider(name, env=env, timeout=timeout)
            continue
        if route is None:
            raise ConfigError(
                f"no built-in way to reach provider {name!r} live: it is not in the catalog\n"
                "TIP: if your project registers it (catalog.register), pass the module that "
                "does: `cassette-refresh check --catalog MODULE ...`."
            )
        key = env.get(route.key_env, "").strip()
        if not key:
            raise ConfigError(
                f"{route.key_env} is not set: it is needed to re-issue the recorded {name} "
                f"requests\nTIP: export {route.key_env} (and {route.base_env} for a compatible "
                "server), or in CI pass it from the repository secrets."
            )
        base_url = _with_scheme(env.get(route.base_env, "").strip(), route.base_url)
        _check_url(base_url, route.base_env, example=route.base_url)
        providers[name] = HTTPProvider(name, base_url=base_url, api_key=key, timeout=timeout)
    return ProviderReissuer(
        providers, retries=retries, max_retry_wait=max_retry_wait, require_json=True
    )
