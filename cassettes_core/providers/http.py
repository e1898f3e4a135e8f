"""The built-in HTTP providers: OpenAI-compatible (chat, responses, embeddings) and Anthropic.

They speak the providers' JSON and SSE over ``httpx2`` (the maintained continuation of httpx,
what the official SDKs use) or plain ``httpx`` when only it is installed. Endpoints and keys
follow the providers' own conventions, read when a call is made, never at construction, so a
replaying test needs no key at all:

- ``openai.chat``, ``openai.responses``, ``openai.embeddings``: ``OPENAI_BASE_URL`` (default
  ``https://api.openai.com/v1``) + ``/chat/completions``, ``/responses``, ``/embeddings``;
  ``OPENAI_API_KEY`` as a bearer token.
- ``anthropic.messages``: ``ANTHROPIC_BASE_URL`` (default ``https://api.anthropic.com``) +
  ``/v1/messages``; ``ANTHROPIC_API_KEY`` as ``x-api-key``, with ``anthropic-version``.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from cassettes_core._errors import ConfigError, ErrorKind, ProviderError
from cassettes_core._model import LLMResponse, StreamEvent
from cassettes_core._request import LLMRequest
from cassettes_core.transport import SSEParser, kept_headers

ANTHROPIC_VERSION = "2023-06-01"


@dataclass(frozen=True)
class Route:
    """Where a provider lives and how it authenticates."""

    base_env: str
    default_base: str
    path: str
    key_env: str
    auth: str  # "bearer" or "x-api-key"


ROUTES: Mapping[str, Route] = {
    "openai.chat": Route(
        "OPENAI_BASE_URL",
        "https://api.openai.com/v1",
        "/chat/completions",
        "OPENAI_API_KEY",
        "bearer",
    ),
    "openai.responses": Route(
        "OPENAI_BASE_URL", "https://api.openai.com/v1", "/responses", "OPENAI_API_KEY", "bearer"
    ),
    "openai.embeddings": Route(
        "OPENAI_BASE_URL", "https://api.openai.com/v1", "/embeddings", "OPENAI_API_KEY", "bearer"
    ),
    "anthropic.messages": Route(
        "ANTHROPIC_BASE_URL",
        "https://api.anthropic.com",
        "/v1/messages",
        "ANTHROPIC_API_KEY",
        "x-api-key",
    ),
}


def http_module() -> ModuleType:
    """httpx2 when installed, else httpx (imported only when a live call is made)."""
    try:
        import httpx2
    except ImportError:
        try:
            import httpx
        except ImportError:
            raise ConfigError(
                "the built-in providers need httpx2 or httpx: pip install httpx2"
            ) from None
        return httpx
    return httpx2


class HTTPProvider:
    """One provider endpoint over HTTP, sync and async, complete and streamed.

    ``base_url`` and ``api_key`` override the environment; ``transport`` is handed to the
    underlying client (for tests, proxies or the cassette transport).
    """

    def __init__(
        self,
        name: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        headers: Mapping[str, str] | None = None,
        transport: Any = None,
    ) -> None:
        if name not in ROUTES:
            raise ConfigError(
                f"no built-in HTTP provider named {name!r}; choose one of {', '.join(ROUTES)} "
                "or write your own Provider"
            )
        self._name = name
        self._route = ROUTES[name]
        self._base_url = base_url
        self._api_key = api_key
        self._timeout = timeout
        self._headers = dict(headers or {})
        self._transport = transport
        self._client: Any = None  # one pooled sync client, made at the first live call

    def close(self) -> None:
        """Close the pooled sync connection (the provider stays usable: it reconnects)."""
        if self._client is not None:
            self._client.close()
            self._client = None

    def __enter__(self) -> HTTPProvider:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __del__(self) -> None:
        # A provider dropped without close() must not leave its socket to the GC's warning.
        with contextlib.suppress(Exception):
            self.close()

    def _sync_client(self, http: ModuleType) -> Any:
        if self._client is None:
            self._client = http.Client(**self._client_kwargs(http))
        return self._client

    @property
    def name(self) -> str:
        return self._name

    # -- request building -------------------------------------------------------------------

    def url(self) -> str:
        base = self._base_url or os.environ.get(self._route.base_env) or self._route.default_base
        return base.rstrip("/") + self._route.path

    def _auth_headers(self) -> dict[str, str]:
        key = self._api_key or os.environ.get(self._route.key_env)
        if not key:
            raise ConfigError(
                f"{self._name} needs an API key for a live call: set {self._route.key_env} "
                "or pass api_key=. (Replaying a cassette needs no key.)"
            )
        headers = {"content-type": "application/json", **self._headers}
        if self._route.auth == "bearer":
            headers["authorization"] = f"Bearer {key}"
        else:
            headers["x-api-key"] = key
            headers.setdefault("anthropic-version", ANTHROPIC_VERSION)
        return headers

    def _body(self, request: LLMRequest, *, stream: bool) -> bytes:
        body = request.body()
        if stream:
            body["stream"] = True
        else:
            body.pop("stream", None)
        return json.dumps(body, ensure_ascii=False).encode("utf-8")

    def _client_kwargs(self, http: ModuleType) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"timeout": self._timeout}
        if self.url().startswith("https:"):
            kwargs["verify"] = _ssl_context(http)
        if self._transport is not None:
            kwargs["transport"] = self._transport
        return kwargs

    # -- sync -------------------------------------------------------------------------------

    def complete(self, request: LLMRequest) -> LLMResponse:
        http = http_module()
        try:
            response = self._sync_client(http).post(
                self.url(), content=self._body(request, stream=False), headers=self._auth_headers()
            )
        except http.TimeoutException as exc:
            raise self._failure("timeout", exc) from exc
        except http.TransportError as exc:
            raise self._failure("connection", exc) from exc
        return self._answer(response.status_code, response.headers, response.content)

    def stream(self, request: LLMRequest) -> Iterator[StreamEvent]:
        http = http_module()
        try:
            with self._sync_client(http).stream(
                "POST",
                self.url(),
                content=self._body(request, stream=True),
                headers=self._auth_headers(),
            ) as response:
                if response.status_code >= 400:
                    response.read()
                    self._answer(response.status_code, response.headers, response.content)
                parser = SSEParser()
                for chunk in response.iter_bytes():
                    yield from parser.feed(chunk)
                yield from parser.close()
        except http.TimeoutException as exc:
            raise self._failure("timeout", exc) from exc
        except http.TransportError as exc:
            raise self._failure("connection", exc) from exc

    # -- async ------------------------------------------------------------------------------

    async def acomplete(self, request: LLMRequest) -> LLMResponse:
        http = http_module()
        try:
            # Async clients are per call (a client cannot outlive its event loop); the shared
            # SSL context keeps that cheap.
            async with http.AsyncClient(**self._client_kwargs(http)) as client:
                response = await client.post(
                    self.url(),
                    content=self._body(request, stream=False),
                    headers=self._auth_headers(),
                )
        except http.TimeoutException as exc:
            raise self._failure("timeout", exc) from exc
        except http.TransportError as exc:
            raise self._failure("connection", exc) from exc
        return self._answer(response.status_code, response.headers, response.content)

    async def astream(self, request: LLMRequest) -> AsyncIterator[StreamEvent]:
        http = http_module()
        try:
            async with (
                http.AsyncClient(**self._client_kwargs(http)) as client,
                client.stream(
                    "POST",
                    self.url(),
                    content=self._body(request, stream=True),
                    headers=self._auth_headers(),
                ) as response,
            ):
                if response.status_code >= 400:
                    await response.aread()
                    self._answer(response.status_code, response.headers, response.content)
                parser = SSEParser()
                async for chunk in response.aiter_bytes():
                    for event in parser.feed(chunk):
                        yield event
                for event in parser.close():
                    yield event
        except http.TimeoutException as exc:
            raise self._failure("timeout", exc) from exc
        except http.TransportError as exc:
            raise self._failure("connection", exc) from exc

    def _failure(self, kind: ErrorKind, exc: Exception) -> ProviderError:
        # The class name leads, as the transport records it: it tells the record_errors policy
        # a provider that was never reached (ConnectError, ConnectTimeout) from a broken answer.
        name = type(exc).__name__
        detail = str(exc) or name
        if kind == "timeout":
            message = f"{name}: no answer from {self.url()} within {self._timeout:g} s ({detail})"
        else:
            message = f"{name}: no connection to {self.url()} ({detail})"
        return ProviderError(kind, message, provider=self._name)

    # -- answers ----------------------------------------------------------------------------

    def _answer(self, status: int, headers: Mapping[str, str], content: bytes) -> LLMResponse:
        kept = kept_headers(headers.items())
        body = _json_or_text(content)
        if status >= 400:
            key = self._api_key or os.environ.get(self._route.key_env) or ""
            raise ProviderError(
                "http_status",
                provider=self._name,
                status=status,
                body=_without(body, key),
                headers=kept,
            )
        return LLMResponse(body=body, status=status, headers=kept)


@functools.cache
def _ssl_context(http: ModuleType) -> Any:
    # Loading the CA bundle costs ~50 ms; one context serves every client of the process.
    return http.create_ssl_context()


def _without(body: Any, key: str) -> Any:
    """``body`` with the key it may quote masked: an error is shown and may be recorded."""
    if len(key) < 8:
        return body
    text = body if isinstance(body, str) else json.dumps(body, ensure_ascii=False)
    if key not in text:
        return body
    from cassettes_core.secrets import mask  # only on this rare path

    masked = text.replace(key, mask(key))
    return masked if isinstance(body, str) else json.loads(masked)


def _json_or_text(content: bytes) -> Any:
    text = content.decode("utf-8", errors="replace")
    try:
        return json.loads(text)
    except ValueError:
        return text
