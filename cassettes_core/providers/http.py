"""The built-in HTTP providers: one for each endpoint of the provider catalog.

They speak the providers' JSON and SSE over ``httpx2`` (the maintained continuation of httpx,
what the official SDKs use) or plain ``httpx`` when only it is installed. Where each endpoint
lives and how its key travels come from its catalog entry (``cassettes_core.catalog``): the
base URL from the entry's variable (``OPENAI_BASE_URL``, ``ANTHROPIC_BASE_URL``) or its default,
the key from its variable (``OPENAI_API_KEY`` as a bearer token, ``ANTHROPIC_API_KEY`` as
``x-api-key``), read when a call is made, never at construction, so a replaying test needs no
key at all. Answers are decoded by the same body codec as the cassette transport's (see
:func:`_decoded` for the one rule the provider adds), and transport failures classified by the
same rule. A URL in a message never shows the base URL's userinfo (a proxy's password).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
from collections.abc import AsyncIterator, Iterator, Mapping
from types import ModuleType
from typing import Any, NoReturn
from urllib.parse import quote, urlsplit, urlunsplit

from cassettes_core import catalog
from cassettes_core._errors import ConfigError, ErrorKind, ProviderError
from cassettes_core._model import LLMResponse, StreamEvent
from cassettes_core._request import LLMRequest
from cassettes_core.catalog import Endpoint
from cassettes_core.transport import (
    NDJSONParser,
    SSEParser,
    failure_kind,
    kept_headers,
    stored_body,
)


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


_MODEL_SLOT = "{model}"


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
        endpoint = catalog.current().get(name)
        if endpoint is None:
            known = ", ".join(catalog.current().names())
            raise ConfigError(
                f"no built-in HTTP provider named {name!r}; choose one of {known}, "
                "register an endpoint (cassettes_core.catalog.register) or write your own Provider"
            )
        self._name = name
        self._route: Endpoint = endpoint
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

    def url(self, request: LLMRequest | None = None) -> str:
        """Where a call goes; an endpoint whose path names the model (Gemini's
        ``/models/{model}:generateContent``) takes it from ``request``."""
        base = self._base_url or os.environ.get(self._route.base_env) or self._route.base_url
        path = self._route.send_path
        if _MODEL_SLOT in path and request is not None:
            if not request.model:
                raise ConfigError(
                    f"{self._name} names the model in its path, and this request has none; "
                    "give the request a model"
                )
            path = path.replace(_MODEL_SLOT, quote(request.model, safe=""))
        return base.rstrip("/") + path

    def _auth_headers(self) -> dict[str, str]:
        key = self._api_key or os.environ.get(self._route.key_env)
        if not key:
            raise ConfigError(
                f"{self._name} needs an API key for a live call: set {self._route.key_env} "
                "or pass api_key=. (Replaying a cassette needs no key.)"
            )
        headers = {"content-type": "application/json", **self._headers}
        headers[self._route.key_header] = f"{self._route.key_prefix}{key}"
        for name, value in self._route.headers.items():  # anthropic-version, unless given
            headers.setdefault(name, value)
        return headers

    def _body(self, request: LLMRequest, *, stream: bool) -> bytes:
        body = request.body()
        if stream and self._route.stream not in ("sse", "ndjson"):
            raise ConfigError(
                f"{self._name} streams {self._route.stream}, which the built-in provider does "
                "not read yet (it reads SSE and NDJSON); call complete() or write your own "
                "Provider"
            )
        if _MODEL_SLOT in self._route.send_path:
            body.pop("model", None)  # it travels in the path
        if self._route.stream_in_path:
            pass  # the path says it streams (Gemini's :streamGenerateContent)
        elif stream:
            body["stream"] = True
        elif self._route.stream == "ndjson":
            body["stream"] = False  # Ollama streams unless told not to
        else:
            body.pop("stream", None)
        return json.dumps(body, ensure_ascii=False).encode("utf-8")

    def _sent(self, request: LLMRequest, *, stream: bool) -> dict[str, Any]:
        """The URL, body and headers of one call."""
        body = self._body(request, stream=stream)
        return {"url": self.url(request), "content": body, "headers": self._auth_headers()}

    def _client_kwargs(self, http: ModuleType) -> dict[str, Any]:
        # The shared context even for http: URLs, where a client would still load the CA bundle.
        kwargs: dict[str, Any] = {"timeout": self._timeout, "verify": _ssl_context(http)}
        if self._transport is not None:
            kwargs["transport"] = self._transport
        return kwargs

    # -- sync -------------------------------------------------------------------------------

    def complete(self, request: LLMRequest) -> LLMResponse:
        http = http_module()
        try:
            response = self._sync_client(http).post(**self._sent(request, stream=False))
        except Exception as exc:
            self._reraise(http, exc)
        return self._answer(response.status_code, response.headers, response.content)

    def stream(self, request: LLMRequest) -> Iterator[StreamEvent]:
        http = http_module()
        try:
            with self._sync_client(http).stream(
                "POST", **self._sent(request, stream=True)
            ) as response:
                if response.status_code >= 400:
                    response.read()
                    self._answer(response.status_code, response.headers, response.content)
                parser = self._parser()
                for chunk in response.iter_bytes():
                    yield from parser.feed(chunk)
                yield from parser.close()
        except Exception as exc:
            self._reraise(http, exc)

    # -- async ------------------------------------------------------------------------------

    async def acomplete(self, request: LLMRequest) -> LLMResponse:
        http = http_module()
        try:
            # Async clients are per call (a client cannot outlive its event loop); the shared
            # SSL context keeps that cheap.
            async with http.AsyncClient(**self._client_kwargs(http)) as client:
                response = await client.post(**self._sent(request, stream=False))
        except Exception as exc:
            self._reraise(http, exc)
        return self._answer(response.status_code, response.headers, response.content)

    async def astream(self, request: LLMRequest) -> AsyncIterator[StreamEvent]:
        http = http_module()
        try:
            async with (
                http.AsyncClient(**self._client_kwargs(http)) as client,
                client.stream("POST", **self._sent(request, stream=True)) as response,
            ):
                if response.status_code >= 400:
                    await response.aread()
                    self._answer(response.status_code, response.headers, response.content)
                parser = self._parser()
                async for chunk in response.aiter_bytes():
                    for event in parser.feed(chunk):
                        yield event
                for event in parser.close():
                    yield event
        except Exception as exc:
            self._reraise(http, exc)

    def _parser(self) -> SSEParser | NDJSONParser:
        return NDJSONParser() if self._route.stream == "ndjson" else SSEParser()

    def _reraise(self, http: ModuleType, exc: Exception) -> NoReturn:
        """``exc`` as a :class:`ProviderError` when it is a transport failure (classified as
        the cassette transport classifies it), else unchanged."""
        kind = failure_kind(http, exc)
        if kind is None:
            raise exc
        raise self._failure(kind, exc) from exc

    def _failure(self, kind: ErrorKind, exc: Exception) -> ProviderError:
        # The class name leads, as the transport records it: it tells the record_errors policy
        # a provider that was never reached (ConnectError, ConnectTimeout) from a broken answer.
        name = type(exc).__name__
        url = self.url()
        shown = _shown(url)
        detail = (str(exc) or name).replace(url, shown)
        userinfo = urlsplit(url).netloc.rpartition("@")[0]
        if userinfo:  # the exception may quote the credentials without the rest of the URL
            detail = detail.replace(userinfo, "***")
        if kind == "timeout":
            message = f"{name}: no answer from {shown} within {self._timeout:g} s ({detail})"
        else:
            message = f"{name}: no connection to {shown} ({detail})"
        return ProviderError(kind, message, provider=self._name)

    # -- answers ----------------------------------------------------------------------------

    def _answer(self, status: int, headers: Mapping[str, str], content: bytes) -> LLMResponse:
        kept = kept_headers(headers.items())
        body = _decoded(content, kept.get("content-type"))
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


def _decoded(content: bytes, content_type: str | None) -> Any:
    """An answer's body as the provider returns it: the shared codec's text, read as JSON.

    The provider only hands the body to its caller (a cassette stores what it returns, and
    replays that same value), so on top of :func:`stored_body` it keeps the reading it always
    had: any JSON value is parsed (a scalar ``42`` or ``"hi"``, ``NaN``), an empty body is
    ``""``, and bytes that are not text in their charset are decoded with replacement
    characters, never refused (the transport refuses those because it must replay the bytes).
    """
    if not content:
        return ""
    body = stored_body(content, content_type, lossy=True)
    if isinstance(body, str):
        with contextlib.suppress(ValueError):
            return json.loads(body)
    return body


def _shown(url: str) -> str:
    """``url`` as a message may print it: without userinfo (``user:password@``)."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


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
