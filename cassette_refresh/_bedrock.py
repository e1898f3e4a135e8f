"""Re-issuing Bedrock runtime calls: signed by botocore with your usual AWS credentials.

:class:`BedrockProvider` is a :class:`~cassettes_core.providers.Provider` for the four Bedrock
endpoints of the catalog. It reads what boto3 reads: credentials from botocore's chain
(``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY``/``AWS_SESSION_TOKEN``, ``AWS_PROFILE``, SSO,
the instance role …), the region from ``AWS_REGION``/``AWS_DEFAULT_REGION`` or the profile (a
model given as an ARN names its own region), and the endpoint that botocore resolves for
``bedrock-runtime`` there, which ``AWS_ENDPOINT_URL_BEDROCK_RUNTIME`` overrides (the
emulator, in tests). Each request is signed with SigV4 by botocore and sent with httpx; the
raw answer is kept (the JSON body, or the event stream decoded into the events a cassette
stores), so the shape check sees every field, also those botocore's parser would drop.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any
from urllib.parse import quote

from cassettes_core import ConfigError, LLMRequest, LLMResponse, ProviderError, StreamEvent, catalog
from cassettes_core.providers.http import http_module
from cassettes_core.transport import (
    EVENTSTREAM_CONTENT_TYPE,
    EventStreamParser,
    aws_kept_headers,
    decode_aws_event,
    stored_body,
)

_SERVICE = "bedrock-runtime"
_SIGNING_NAME = "bedrock"


class BedrockProvider:
    """One Bedrock runtime endpoint (``bedrock.converse`` …), signed with botocore."""

    def __init__(self, name: str, *, env: Mapping[str, str], timeout: float = 60.0) -> None:
        endpoint = catalog.current().get(name)
        if endpoint is None or endpoint.family != "bedrock":
            raise ConfigError(f"{name!r} is not a Bedrock endpoint of the catalog")
        self._name = name
        self._route = endpoint.route
        self._base_env = endpoint.base_env  # AWS_ENDPOINT_URL_BEDROCK_RUNTIME, botocore's own
        self._timeout = timeout
        self._env = dict(env)
        self._session: Any = None

    @property
    def name(self) -> str:
        return self._name

    # -- where and who ------------------------------------------------------------------

    def _botocore(self) -> Any:
        if self._session is None:
            try:
                import botocore.session
            except ImportError:
                raise ConfigError(
                    "re-issuing Bedrock calls needs botocore (it signs them): pip install boto3"
                ) from None
            self._session = botocore.session.get_session()
        return self._session

    def _region(self, model: str) -> str:
        if model.startswith("arn:"):
            parts = model.split(":")
            if len(parts) > 3 and parts[3]:
                return parts[3]
        region = (
            self._env.get("AWS_REGION")
            or self._env.get("AWS_DEFAULT_REGION")
            or self._botocore().get_config_variable("region")
        )
        if not region:
            raise ConfigError(
                "no AWS region to re-issue Bedrock calls in\n"
                "TIP: export AWS_REGION (for example us-east-1), or set one in your AWS profile."
            )
        return str(region)

    def _url(self, region: str, model: str) -> str:
        base = self._env.get(self._base_env) or self._env.get("AWS_ENDPOINT_URL")
        if not base:
            client = self._botocore().create_client(_SERVICE, region_name=region)
            base = client.meta.endpoint_url
        head, _, operation = self._route.rpartition("/")
        prefix = head.rsplit("/", 1)[0]  # the route's path up to the model
        return f"{str(base).rstrip('/')}{prefix}/{quote(model, safe='')}/{operation}"

    def _signed(self, request: LLMRequest, *, stream: bool) -> tuple[str, dict[str, str], bytes]:
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest

        body = dict(request.body())
        model = str(body.pop("model", "") or "")
        if not model:
            raise ConfigError(f"a recorded {self._name} request has no model to send it to")
        credentials = self._botocore().get_credentials()
        if credentials is None:
            raise ConfigError(
                "no AWS credentials found to re-issue Bedrock calls\n"
                "TIP: export AWS_PROFILE (or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY), as "
                "boto3 would use them."
            )
        region = self._region(model)
        content = json.dumps(body, separators=(",", ":")).encode()
        accept = EVENTSTREAM_CONTENT_TYPE if stream else "application/json"
        prepared = AWSRequest(
            method="POST",
            url=self._url(region, model),
            data=content,
            headers={"content-type": "application/json", "accept": accept},
        )
        SigV4Auth(credentials.get_frozen_credentials(), _SIGNING_NAME, region).add_auth(prepared)
        return prepared.url, dict(prepared.headers.items()), content

    # -- sending ------------------------------------------------------------------------

    def _send(self, request: LLMRequest, *, stream: bool) -> Any:
        url, headers, content = self._signed(request, stream=stream)
        http = http_module()
        try:
            with http.Client(timeout=self._timeout) as client:
                answer = client.post(url, headers=headers, content=content)
        except http.TimeoutException as exc:
            raise ProviderError("timeout", str(exc), provider=self._name) from None
        except http.TransportError as exc:
            raise ProviderError("connection", str(exc), provider=self._name) from None
        if answer.status_code >= 300:
            body = stored_body(answer.content, answer.headers.get("content-type"), lossy=True)
            raise ProviderError(
                "http_status",
                provider=self._name,
                status=answer.status_code,
                body=body,
                headers=dict(answer.headers.items()),
            )
        return answer

    def complete(self, request: LLMRequest) -> LLMResponse:
        answer = self._send(request, stream=False)
        body = stored_body(answer.content, answer.headers.get("content-type"))
        # The headers a recording through boto3 keeps (a rewrite stores this answer).
        kept = aws_kept_headers(answer.headers.items())
        return LLMResponse(body=body, status=answer.status_code, headers=kept)

    def stream(self, request: LLMRequest) -> Iterator[StreamEvent]:
        answer = self._send(request, stream=True)
        parser = EventStreamParser()
        frames = parser.feed(answer.content)
        parser.close()
        for frame in frames:
            yield decode_aws_event(frame)

    async def acomplete(self, request: LLMRequest) -> LLMResponse:
        return await asyncio.to_thread(self.complete, request)

    async def astream(self, request: LLMRequest) -> AsyncIterator[StreamEvent]:
        events = await asyncio.to_thread(lambda: list(self.stream(request)))
        for event in events:
            yield event
