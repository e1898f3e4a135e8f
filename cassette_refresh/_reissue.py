"""Re-issuing recorded requests against the live provider.

The check talks to providers through one small seam, :class:`Reissuer`: give it a call (provider,
endpoint, the body that was sent), get back the live answer or a :class:`ProviderError`. Two
implementations:

:class:`HttpReissuer`
    the default for the built-in providers: their routes and auth conventions (the same table
    the built-in HTTP providers use: ``OPENAI_BASE_URL``/``OPENAI_API_KEY`` as Bearer,
    ``ANTHROPIC_BASE_URL``/``ANTHROPIC_API_KEY`` as ``x-api-key`` with ``anthropic-version``),
    over one pooled ``httpx2.AsyncClient`` shared by every call of the check.
:class:`ProviderReissuer`
    any :class:`~cassettes_core.providers.Provider` object: the built-in ones or your own
    (gRPC, an in-house gateway), through its ``acomplete``/``astream``.

Both honour ``retry-after`` (and ``retry-after-ms``) on 429 and 5xx, up to a cap and a few tries.
"""

from __future__ import annotations

import asyncio
import functools
import ssl
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, Protocol

import httpx2

from cassettes_core._errors import ConfigError, ProviderError
from cassettes_core._request import LLMRequest
from cassettes_core.providers import Provider
from cassettes_core.providers.http import ANTHROPIC_VERSION, ROUTES
from cassettes_core.transport._headers import kept_headers
from cassettes_core.transport._sse import SSEParser

RETRY_STATUSES: frozenset[int | None] = frozenset({429, 500, 502, 503, 504, 529})


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
    """What the live provider answered: a JSON ``body`` or the parsed SSE ``events``."""

    status: int
    headers: Mapping[str, str] = field(default_factory=dict)
    body: Any = None
    events: tuple[tuple[str | None, Any], ...] | None = None
    duration_ms: int = 0


class Reissuer(Protocol):
    """Sends a recorded request to the live provider.

    ``reissue`` returns the live answer, or raises :class:`ProviderError` (``status`` 401/403
    means the credentials were refused: the whole check stops). ``aclose`` releases connections.
    """

    def supports(self, provider: str) -> bool:
        """Whether calls of ``provider`` can be re-issued (the others are skipped)."""

    async def reissue(self, call: LiveCall) -> LiveAnswer: ...

    async def aclose(self) -> None: ...


@dataclass(frozen=True)
class Target:
    """Where one provider's calls go and how they authenticate (the key is kept out of repr)."""

    url: str
    key_variable: str
    key: str = field(repr=False)
    auth: str = "bearer"

    def headers(self) -> dict[str, str]:
        if self.auth == "x-api-key":
            return {"x-api-key": self.key, "anthropic-version": ANTHROPIC_VERSION}
        return {"authorization": f"Bearer {self.key}"}


def supports(provider: str) -> bool:
    """Whether the built-in re-issuer knows how to reach ``provider``."""
    return provider in ROUTES


def target_for(provider: str, env: Mapping[str, str]) -> Target:
    """The URL and key for a built-in ``provider`` from the environment; ConfigError if no key."""
    route = ROUTES.get(provider)
    if route is None:
        raise ConfigError(f"no built-in way to reach provider {provider!r} live")
    key = env.get(route.key_env, "").strip()
    if not key:
        base = route.base_env
        raise ConfigError(
            f"{route.key_env} is not set: it is needed to re-issue the recorded {provider} "
            f"requests\nTIP: export {route.key_env} (and {base} for a compatible server), "
            "or in CI pass it from the repository secrets."
        )
    base_url = env.get(route.base_env, "").strip() or route.default_base
    return Target(base_url.rstrip("/") + route.path, route.key_env, key, route.auth)


def parse_sse(content: bytes) -> tuple[tuple[str | None, Any], ...]:
    """A whole event stream as ``(event name or None, data)`` pairs (the library's parser)."""
    parser = SSEParser()
    events = [*parser.feed(content), *parser.close()]
    return tuple((event.event, event.data) for event in events)


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


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    """One TLS context per process: building one loads the CA bundle (about 0.1 s)."""
    return httpx2.create_ssl_context()


async def _with_retries(
    send: Callable[[], Awaitable[LiveAnswer]], *, retries: int, cap: float
) -> LiveAnswer:
    """``send()``, again after the advised wait while it fails with a retryable status."""
    attempt = 0
    while True:
        try:
            return await send()
        except ProviderError as exc:
            if exc.status not in RETRY_STATUSES or attempt >= retries:
                raise
            await asyncio.sleep(retry_delay(exc.headers, attempt=attempt, cap=cap))
            attempt += 1


class HttpReissuer:
    """The default :class:`Reissuer`: the built-in providers' HTTP APIs, one pooled client."""

    def __init__(
        self,
        targets: Mapping[str, Target],
        *,
        timeout: float = 60.0,
        retries: int = 3,
        max_retry_wait: float = 30.0,
        transport: httpx2.AsyncBaseTransport | None = None,
    ) -> None:
        self.targets = dict(targets)
        self.retries = retries
        self.max_retry_wait = max_retry_wait
        self._client = httpx2.AsyncClient(
            timeout=httpx2.Timeout(timeout),
            transport=transport,
            follow_redirects=False,
            verify=_ssl_context(),
        )

    def supports(self, provider: str) -> bool:
        return provider in self.targets

    async def aclose(self) -> None:
        await self._client.aclose()

    async def reissue(self, call: LiveCall) -> LiveAnswer:
        target = self.targets.get(call.provider)
        if target is None:
            raise ConfigError(f"no live target configured for provider {call.provider!r}")
        headers = {**target.headers(), "content-type": "application/json"}
        body = dict(call.body)
        if call.stream:
            headers["accept"] = "text/event-stream"
            body["stream"] = True

        async def send() -> LiveAnswer:
            started = time.monotonic()
            response = await self._post(call, target.url, body, headers)
            return _answer(call, target.url, response, int((time.monotonic() - started) * 1000))

        return await _with_retries(send, retries=self.retries, cap=self.max_retry_wait)

    async def _post(
        self, call: LiveCall, url: str, body: dict[str, Any], headers: dict[str, str]
    ) -> httpx2.Response:
        try:
            return await self._client.post(url, json=body, headers=headers)
        except httpx2.TimeoutException as exc:
            raise ProviderError(
                "timeout", f"no answer from {url} in time", provider=call.provider
            ) from exc
        except httpx2.TransportError as exc:
            raise ProviderError(
                "connection", f"{url}: {type(exc).__name__}: {exc}", provider=call.provider
            ) from exc


def _answer(call: LiveCall, url: str, response: httpx2.Response, duration_ms: int) -> LiveAnswer:
    headers = kept_headers(response.headers.items())
    if response.status_code >= 400:
        try:
            body: Any = response.json()
        except ValueError:
            body = response.text[:500]
        raise ProviderError(
            "http_status",
            f"POST {url}",
            provider=call.provider,
            status=response.status_code,
            body=body,
            headers=headers,
        )
    if "text/event-stream" in response.headers.get("content-type", ""):
        events = parse_sse(response.content)
        return LiveAnswer(response.status_code, headers, events=events, duration_ms=duration_ms)
    try:
        body = response.json()
    except ValueError as exc:
        raise ProviderError(
            "http_status",
            f"POST {url}: the answer is neither JSON nor an event stream",
            provider=call.provider,
            status=response.status_code,
            body=response.text[:200],
        ) from exc
    return LiveAnswer(response.status_code, headers, body=body, duration_ms=duration_ms)


class ProviderReissuer:
    """A :class:`Reissuer` over :class:`~cassettes_core.providers.Provider` objects, by name.

    For providers of your own (``{"acme.grpc": AcmeProvider()}``) or the built-in HTTP ones
    (``HTTPProvider("openai.chat")``): a recorded stream is re-issued with ``astream``, anything
    else with ``acomplete``.
    """

    def __init__(
        self,
        providers: Mapping[str, Provider],
        *,
        retries: int = 3,
        max_retry_wait: float = 30.0,
    ) -> None:
        self.providers = dict(providers)
        self.retries = retries
        self.max_retry_wait = max_retry_wait

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
                events = [(event.event, event.data) async for event in provider.astream(request)]
                took = int((time.monotonic() - started) * 1000)
                return LiveAnswer(200, events=tuple(events), duration_ms=took)
            answer = await provider.acomplete(request)
            took = int((time.monotonic() - started) * 1000)
            return LiveAnswer(
                answer.status, dict(answer.headers), body=answer.body, duration_ms=took
            )

        return await _with_retries(send, retries=self.retries, cap=self.max_retry_wait)
