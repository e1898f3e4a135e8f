"""What the built-in HTTP provider returns for odd answers is what it returned before the
shared body codec (``_json_or_text`` at 8c9652b), and no URL it prints shows a password.

A loopback server answers with exactly scripted bytes; the provider's answer is compared with
the old reading of the same bytes, bare and inside a passthrough cassette.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import pytest

from cassettes_core import (
    CassetteProvider,
    LLMRequest,
    ProviderError,
    Recorder,
    UnrecordableAnswerError,
)
from cassettes_core.providers.http import HTTPProvider
from cassettes_core.transport.httpx2 import CassetteTransport
from tests.helpers.raw_http import RawReply, RawServer, raw_server


def old_json_or_text(content: bytes) -> Any:
    """The provider's reading of an answer before the shared codec (verbatim)."""
    text = content.decode("utf-8", errors="replace")
    try:
        return json.loads(text)
    except ValueError:
        return text


def _chat() -> LLMRequest:
    return LLMRequest.from_body(
        "openai.chat", {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}
    )


def _provider(server: RawServer, base_url: str | None = None) -> HTTPProvider:
    return HTTPProvider("openai.chat", base_url=base_url or server.base_url, api_key="k")


BODIES = {
    "empty": b"",
    "int": b"42",
    "string": b'"hi"',
    "null": b"null",
    "true": b"true",
    "nan": b"NaN",
    "nan-in-object": b'{"score": NaN}',
    "object": b'{"a": 1}',
    "array": b"[1, 2]",
    "padded-object": b'  {"a": 1}\n',
    "text": b"plain text",
    "non-utf-8": b"caf\xe9 \xff\xfe",
    "non-utf-8-json": b'{"a": "caf\xe9"}',
}


def _same(new: Any, old: Any) -> bool:
    # NaN != NaN: compare the JSON text of structures, allowing NaN.
    return type(new) is type(old) and json.dumps(new) == json.dumps(old)


@pytest.mark.parametrize("case", sorted(BODIES))
@pytest.mark.parametrize("status", [200, 500])
def test_an_answer_reads_as_before_the_shared_codec(case: str, status: int) -> None:
    content = BODIES[case]
    reply = RawReply(
        status=status, headers=[(b"content-type", b"application/json")], chunks=[content]
    )
    with raw_server(reply) as server:
        if status == 200:
            body = _provider(server).complete(_chat()).body
        else:
            with pytest.raises(ProviderError) as caught:
                _provider(server).complete(_chat())
            body = caught.value.body
    assert _same(body, old_json_or_text(content)), (body, old_json_or_text(content))


@pytest.mark.parametrize("case", ["non-utf-8", "int", "empty", "nan"])
def test_a_passthrough_cassette_hands_on_the_same_answer(case: str, tmp_path: Path) -> None:
    """Passthrough writes nothing, so it refuses nothing: the caller gets the old reading."""
    content = BODIES[case]
    with raw_server(RawReply(chunks=[content])) as server:
        provider = CassetteProvider(_provider(server), tmp_path / "c.yaml", mode="passthrough")
        body = provider.complete(_chat()).body
    assert _same(body, old_json_or_text(content))
    assert not (tmp_path / "c.yaml").exists()


def test_no_message_prints_the_base_urls_password() -> None:
    """A proxy base URL with userinfo: the connection failure names the URL without it."""
    provider = HTTPProvider(
        "openai.chat", base_url="http://proxyuser:s3cr3t-pw@127.0.0.1:9/v1", api_key="k"
    )
    with pytest.raises(ProviderError) as caught:
        provider.complete(_chat())
    message = str(caught.value)
    assert "127.0.0.1:9/v1/chat/completions" in message
    assert "s3cr3t-pw" not in message
    assert "proxyuser" not in message


def test_a_redirect_refusal_prints_its_location_without_the_password(tmp_path: Path) -> None:
    location = b"http://proxyuser:s3cr3t-pw@127.0.0.1:9/v1/chat/completions"
    reply = RawReply(status=302, headers=[(b"location", location)])
    with (
        raw_server(reply) as server,
        httpx2.Client(
            transport=CassetteTransport(Recorder(tmp_path / "c.yaml", mode="record"))
        ) as client,
        pytest.raises(UnrecordableAnswerError) as caught,
    ):
        client.post(f"{server.base_url}/chat/completions", json=_chat().body())
    message = str(caught.value)
    assert "redirected (HTTP 302 to http://127.0.0.1:9/v1/chat/completions)" in message
    assert "s3cr3t-pw" not in message
    assert "proxyuser" not in message
