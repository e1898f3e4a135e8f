"""Whatever a recording holds replays as the SDK saw it live, or recording refuses it up front.

A loopback server answers with exactly scripted bytes (odd headers, charsets, encodings, HTML
error pages, odd SSE framing); the real openai and anthropic SDKs record through the cassette
transport, then replay under ``CI=true`` with the server untouched and equal ``model_dump()``s.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import openai
import pytest

from cassettes_core import Recorder, UnrecordableAnswerError, load_cassette
from cassettes_core.transport.httpx2 import AsyncCassetteTransport, CassetteTransport
from tests.helpers.raw_http import RawReply, RawServer, raw_server

MESSAGES = [{"role": "user", "content": "Say café"}]
CHAT: dict[str, Any] = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1,
    "model": "gpt-4o",
    "choices": [
        {
            "index": 0,
            "finish_reason": "stop",
            "message": {"role": "assistant", "content": "Café, naïve, 東京 ✓"},
        }
    ],
}
JSON_TYPE = (b"content-type", b"application/json")


def _chat_bytes(*, ascii_only: bool = False) -> bytes:
    return json.dumps(CHAT, ensure_ascii=ascii_only).encode("utf-8")


def _openai(server: RawServer, recorder: Recorder) -> openai.OpenAI:
    http = httpx2.Client(transport=CassetteTransport(recorder))
    return openai.OpenAI(base_url=server.base_url, api_key="k", http_client=http, max_retries=0)


def _outcome(call: Callable[[], Any]) -> Any:
    """What the caller saw: the parsed answer's dump, or the error's class, status and body."""
    try:
        value = call()
    except openai.APIStatusError as exc:
        return ("status-error", type(exc).__name__, exc.status_code, exc.body, exc.message)
    except anthropic.APIStatusError as exc:
        return ("status-error", type(exc).__name__, exc.status_code, exc.body, exc.message)
    except (ValueError, openai.APIError, anthropic.APIError) as exc:  # e.g. an empty 200 body
        return ("raised", type(exc).__name__, str(exc))
    if hasattr(value, "model_dump"):
        return value.model_dump(warnings=False)
    return [item.model_dump(warnings=False) for item in value]


def _record_then_replay(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    reply: RawReply,
    call: Callable[[RawServer, Recorder], Any],
) -> tuple[Any, Any]:
    """Record ``call`` against ``reply``, then replay it under CI with no live call."""
    path = tmp_path / "c.yaml"
    with raw_server(reply) as server:
        live = _outcome(lambda: call(server, Recorder(path, mode="record")))
        assert server.hits == 1
        monkeypatch.setenv("CI", "true")
        replay_recorder = Recorder(path)
        assert replay_recorder.mode.value == "replay"
        replayed = _outcome(lambda: call(server, replay_recorder))
        assert server.hits == 1, "the replay went live"
    assert replay_recorder.stats.replayed == 1
    return live, replayed


def _chat_call(server: RawServer, recorder: Recorder) -> Any:
    with _openai(server, recorder) as client:
        raw = client.chat.completions.with_raw_response.create(model="gpt-4o", messages=MESSAGES)
        parsed = raw.parse()
        return _Headed(parsed, dict(raw.headers))


class _Headed:
    """An SDK answer and the response headers the SDK saw."""

    def __init__(self, value: Any, headers: dict[str, str]) -> None:
        self.value, self.headers = value, headers

    def model_dump(self, **options: Any) -> Any:
        kept = {
            k: v
            for k, v in self.headers.items()
            if k.startswith(("x-request", "x-ratelimit", "request-id"))
        }
        return {"answer": self.value.model_dump(**options), "headers": kept}


@pytest.mark.parametrize(
    "value",
    [
        pytest.param("café".encode(), id="utf-8"),
        pytest.param(b"caf\xe9", id="latin-1"),
        pytest.param(b"\xff\xfe\x80\x81", id="invalid-utf-8"),
        pytest.param(b"a\x01b\x7fc\tz", id="control-bytes"),
        pytest.param("東京 ✓".encode(), id="cjk"),
    ],
)
def test_response_headers_with_any_bytes_replay_as_the_sdk_saw_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: bytes
) -> None:
    """A kept header (x-request-id) with any bytes records, and replays to the same text."""
    reply = RawReply(headers=[JSON_TYPE, (b"x-request-id", value)], chunks=[_chat_bytes()])
    live, replayed = _record_then_replay(tmp_path, monkeypatch, reply, _chat_call)
    assert replayed == live
    assert live["headers"]["x-request-id"]


def test_mixed_header_encodings_replay_the_same_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """UTF-8 and latin-1 values in one answer (the client then decodes all as latin-1)."""
    headers = [JSON_TYPE, (b"x-request-id", b"caf\xe9"), (b"x-ratelimit-note", "€".encode())]
    reply = RawReply(headers=headers, chunks=[_chat_bytes()])
    live, replayed = _record_then_replay(tmp_path, monkeypatch, reply, _chat_call)
    assert replayed == live


@pytest.mark.parametrize(
    ("encoding", "encode"),
    [
        pytest.param(b"gzip", gzip.compress, id="gzip"),
        pytest.param(b"deflate", zlib.compress, id="deflate"),
    ],
)
def test_compressed_bodies_are_stored_decoded_and_replayed_without_the_encoding(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    encoding: bytes,
    encode: Callable[[bytes], bytes],
) -> None:
    """content-encoding is undone once: the cassette holds the JSON, replay serves it plain."""
    reply = RawReply(
        headers=[JSON_TYPE, (b"content-encoding", encoding)], chunks=[encode(_chat_bytes())]
    )
    live, replayed = _record_then_replay(tmp_path, monkeypatch, reply, _chat_call)
    assert replayed == live
    stored = load_cassette(tmp_path / "c.yaml")
    assert stored is not None
    response = stored.interactions[0].response
    assert response is not None
    assert response.body == CHAT
    assert "content-encoding" not in response.headers


def test_a_stored_content_encoding_is_never_served_over_the_decoded_body(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cassette edited to hold content-encoding/content-length still replays."""
    path = tmp_path / "c.yaml"
    with raw_server(RawReply(headers=[JSON_TYPE], chunks=[_chat_bytes()])) as server:
        live = _outcome(lambda: _chat_call(server, Recorder(path, mode="record")))
    text = path.read_text(encoding="utf-8")
    edited = text.replace(
        "content-type: application/json",
        "content-type: application/json\n      content-encoding: gzip\n      content-length: '3'",
    )
    assert edited != text
    path.write_text(edited, encoding="utf-8")
    monkeypatch.setenv("CI", "true")
    with raw_server(RawReply(status=500)) as server:
        assert _outcome(lambda: _chat_call(server, Recorder(path))) == live
        assert server.hits == 0


@pytest.mark.parametrize(
    "charset", [pytest.param("iso-8859-1", id="latin-1"), pytest.param("utf-16", id="utf-16")]
)
def test_bodies_in_another_charset_replay_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, charset: str
) -> None:
    """A JSON body in a declared charset (escaped, as JSON parsers need) replays equal."""
    body = _chat_bytes(ascii_only=True).decode().encode(charset)
    content_type = f"application/json; charset={charset}".encode()
    reply = RawReply(headers=[(b"content-type", content_type)], chunks=[body])
    live, replayed = _record_then_replay(tmp_path, monkeypatch, reply, _chat_call)
    assert replayed == live
    assert live["answer"]["choices"][0]["message"]["content"] == "Café, naïve, 東京 ✓"


def test_html_error_pages_replay_as_the_same_status_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A proxy's HTML 502 page (not JSON, latin-1) is recorded and replays the same error."""
    page = "<html><body><h1>502 Bad Gateway</h1><p>naïve proxy</p></body></html>"
    reply = RawReply(
        status=502,
        headers=[(b"content-type", b"text/html; charset=iso-8859-1")],
        chunks=[page.encode("latin-1")],
    )
    live, replayed = _record_then_replay(tmp_path, monkeypatch, reply, _chat_call)
    assert live[:3] == ("status-error", "InternalServerError", 502)
    assert replayed == live


@pytest.mark.parametrize(
    ("content_type", "content"),
    [
        pytest.param(
            b"text/html", "<h1>caf\xe9 \x80</h1>".encode("latin-1"), id="undeclared-latin-1"
        ),
        pytest.param(b"application/octet-stream", bytes(range(256)), id="binary"),
    ],
)
def test_an_undecodable_error_body_is_recorded_as_the_sdk_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content_type: bytes, content: bytes
) -> None:
    """A 502 whose bytes are not UTF-8 (no charset declared): the SDK reads only its text,
    with replacement characters; that is stored, and the same error replays."""
    reply = RawReply(status=502, headers=[(b"content-type", content_type)], chunks=[content])
    live, replayed = _record_then_replay(tmp_path, monkeypatch, reply, _chat_call)
    assert live[:3] == ("status-error", "InternalServerError", 502)
    assert replayed == live


def test_an_empty_error_body_replays_as_the_same_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 503 with no body at all replays as the same status error."""
    reply = RawReply(status=503, headers=[(b"content-type", b"text/plain")], chunks=[b""])
    live, replayed = _record_then_replay(tmp_path, monkeypatch, reply, _chat_call)
    assert live[:3] == ("status-error", "InternalServerError", 503)
    assert replayed == live


def test_a_binary_body_is_refused_at_record_time_and_nothing_is_written(
    tmp_path: Path,
) -> None:
    """A successful answer whose bytes are not text in their charset cannot be stored
    unchanged: refused, no file."""
    path = tmp_path / "c.yaml"
    reply = RawReply(
        headers=[(b"content-type", b"application/octet-stream")],
        chunks=[bytes(range(256))],
    )
    with raw_server(reply) as server, pytest.raises(UnrecordableAnswerError) as caught:
        _chat_call(server, Recorder(path, mode="record"))
    assert "not utf-8 text" in str(caught.value)
    assert "Nothing was written" in str(caught.value)
    assert not path.exists()


# -- streams ------------------------------------------------------------------------------


def _chunk(content: str | None, finish: str | None = None) -> dict[str, Any]:
    delta = {} if content is None else {"content": content}
    return {
        "id": "chatcmpl-s",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gpt-4o",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def _sse(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=False).encode()


# Each framing: the raw SSE chunks of one openai chat stream, split where a server might.
OPENAI_FRAMINGS = {
    "lf": [b"data: " + _sse(_chunk("Ca")) + b"\n\n", b"data: " + _sse(_chunk("fé")) + b"\n\n"],
    "crlf": [
        b"data: " + _sse(_chunk("Ca")) + b"\r\n\r\n" + b"data: " + _sse(_chunk("fé")) + b"\r\n\r\n"
    ],
    "cr": [b"data: " + _sse(_chunk("Ca")) + b"\r\r", b"data: " + _sse(_chunk("fé")) + b"\r\r"],
    "no-space": [b"data:" + _sse(_chunk("Ca")) + b"\n\n", b"data:" + _sse(_chunk("fé")) + b"\n\n"],
    "comments-retry-id": [
        b": keep-alive\n\n",
        # (a comment inside an event: after an `id:` the SDK turns a bare blank line into
        # an empty event, live as on replay)
        b": ping\nretry: 3000\nid: 7\ndata: " + _sse(_chunk("Ca")) + b"\n\n",
        b"data: " + _sse(_chunk("fé")) + b"\n\n",
    ],
    "split-mid-char": [
        b"data: " + _sse(_chunk("Ca")) + b"\n\ndata: " + _sse(_chunk("fé"))[:-4],
        _sse(_chunk("fé"))[-4:] + b"\n",
        b"\n",
    ],
    "multi-line-data": [
        b'data: {"id":"chatcmpl-s","object":"chat.completion.chunk",\ndata: "created":1,'
        b'"model":"gpt-4o","choices":[{"index":0,"delta":{"content":"Ca"},'
        b'"finish_reason":null}]}\n\n',
        b"data: " + _sse(_chunk("fé")) + b"\n\n",
    ],
    "empty-data-and-named-events": [
        b"event: message\ndata: " + _sse(_chunk("Ca")) + b"\n\n",
        b"data:\n\n",
        b"data: " + _sse(_chunk("fé")) + b"\n\n",
    ],
}


def _with_done(chunks: list[bytes]) -> list[bytes]:
    return [*chunks, b"data: " + _sse(_chunk(None, "stop")) + b"\n\n", b"data: [DONE]\n\n"]


def _stream_call(server: RawServer, recorder: Recorder) -> list[Any]:
    with _openai(server, recorder) as client:
        stream = client.chat.completions.create(model="gpt-4o", messages=MESSAGES, stream=True)
        return list(stream)


@pytest.mark.parametrize("framing", sorted(OPENAI_FRAMINGS))
def test_odd_sse_framing_replays_the_same_chunks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, framing: str
) -> None:
    """CR/LF line ends, `data:` without a space, comments, retry/id lines, split UTF-8,
    multi-line and empty data: the replayed stream parses to the same chunks."""
    chunks = _with_done(OPENAI_FRAMINGS[framing])
    if framing == "empty-data-and-named-events":
        # An empty `data:` event is not JSON: the SDK fails on it live, and on replay alike.
        chunks = [c for c in chunks if c != b"data:\n\n"]
    reply = RawReply(headers=[(b"content-type", b"text/event-stream")], chunks=chunks, chunked=True)
    live, replayed = _record_then_replay(tmp_path, monkeypatch, reply, _stream_call)
    assert replayed == live
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in live)
    assert text == "Café"


def test_non_json_stream_data_is_kept_as_its_raw_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Non-JSON data lines (an empty event, plain words, [DONE]) are stored as text and
    re-encoded byte for byte: the raw replayed stream equals the live one, event by event."""
    chunks = [
        b"data: " + _sse(_chunk("Ca")) + b"\n\n",
        b"data:\n\n",
        b"data: plain words, not JSON\n\n",
        b"data: 42\n\n",
        b"data: [DONE]\n\n",
    ]
    reply = RawReply(headers=[(b"content-type", b"text/event-stream")], chunks=chunks, chunked=True)

    def raw_events(server: RawServer, recorder: Recorder) -> Any:
        with httpx2.Client(transport=CassetteTransport(recorder)) as client:
            body = {"model": "gpt-4o", "messages": MESSAGES, "stream": True}
            with client.stream("POST", f"{server.base_url}/chat/completions", json=body) as r:
                return _Lines(b"".join(r.iter_bytes()))

    live, replayed = _record_then_replay(tmp_path, monkeypatch, reply, raw_events)
    assert replayed == live
    assert live == [json.loads(_sse(_chunk("Ca"))), "", "plain words, not JSON", "42", "[DONE]"]


class _Lines(list[str]):
    """The data of each SSE event in raw stream bytes (JSON compared parsed)."""

    def __init__(self, raw: bytes) -> None:
        from cassettes_core.transport._sse import encode_data, parse_stream

        super().__init__(encode_data(e.data) for e in parse_stream([raw]))

    def model_dump(self, **options: Any) -> list[Any]:
        return [json.loads(x) if x.startswith("{") else x for x in self]


def test_async_openai_stream_with_crlf_replays_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The async SDK over the async transport: CRLF-framed stream, equal chunks on replay."""
    reply = RawReply(
        headers=[(b"content-type", b"text/event-stream; charset=utf-8")],
        chunks=_with_done(OPENAI_FRAMINGS["crlf"]),
        chunked=True,
    )

    def call(server: RawServer, recorder: Recorder) -> list[Any]:
        async def run() -> list[Any]:
            http = httpx2.AsyncClient(transport=AsyncCassetteTransport(recorder))
            async with openai.AsyncOpenAI(
                base_url=server.base_url, api_key="k", http_client=http, max_retries=0
            ) as client:
                stream = await client.chat.completions.create(
                    model="gpt-4o", messages=MESSAGES, stream=True
                )
                return [chunk async for chunk in stream]

        return asyncio.run(run())

    live, replayed = _record_then_replay(tmp_path, monkeypatch, reply, call)
    assert replayed == live


def _anthropic_events() -> list[bytes]:
    def event(name: str, data: dict[str, Any]) -> bytes:
        payload = _sse({"type": name, **data})
        return b"event: " + name.encode() + b"\r\ndata:" + payload + b"\r\n\r\n"

    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-3-5-haiku-latest",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 3, "output_tokens": 1},
    }
    return [
        event("message_start", {"message": message}),
        b": comment line\r\n\r\n",
        event("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}),
        event("ping", {}),
        event("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": "Café"}}),
        event("content_block_stop", {"index": 0}),
        event(
            "message_delta",
            {
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": 2},
            },
        ),
        event("message_stop", {}),
    ]


def test_anthropic_stream_with_crlf_no_space_and_comments_replays_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The anthropic SDK's named events, CRLF-framed, `data:` without a space, a comment."""
    reply = RawReply(
        headers=[(b"content-type", b"text/event-stream")], chunks=_anthropic_events(), chunked=True
    )

    def call(server: RawServer, recorder: Recorder) -> list[Any]:
        http = httpx2.Client(transport=CassetteTransport(recorder))
        base = server.base_url.removesuffix("/v1")
        with anthropic.Anthropic(
            base_url=base, api_key="k", http_client=http, max_retries=0
        ) as client:
            stream = client.messages.create(
                model="claude-3-5-haiku-latest", max_tokens=10, messages=MESSAGES, stream=True
            )
            return list(stream)

    live, replayed = _record_then_replay(tmp_path, monkeypatch, reply, call)
    assert replayed == live
    assert any(getattr(e, "type", "") == "content_block_delta" for e in [*_Events(live)])


class _Events(list[Any]):
    """Dumped anthropic events, viewed as objects with a ``type``."""

    def __init__(self, dumps: list[dict[str, Any]]) -> None:
        super().__init__(type("E", (), {"type": d.get("type")})() for d in dumps)


def test_an_empty_200_body_fails_the_same_way_on_replay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An empty success body (stored as null) makes the SDK fail exactly as it did live."""
    reply = RawReply(headers=[JSON_TYPE], chunks=[b""])
    live, replayed = _record_then_replay(tmp_path, monkeypatch, reply, _chat_call)
    assert live[0] == "raised"
    assert replayed == live


def _claude_call(server: RawServer, recorder: Recorder) -> Any:
    http = httpx2.Client(transport=CassetteTransport(recorder))
    base = server.base_url.removesuffix("/v1")
    with anthropic.Anthropic(base_url=base, api_key="k", http_client=http, max_retries=0) as c:
        raw = c.messages.with_raw_response.create(
            model="claude-3-5-haiku-latest", max_tokens=10, messages=MESSAGES
        )
        return _Headed(raw.parse(), dict(raw.headers))


CLAUDE = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-3-5-haiku-latest",
    "content": [{"type": "text", "text": "Café ✓"}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 3, "output_tokens": 2},
}


@pytest.mark.parametrize(
    "reply",
    [
        pytest.param(
            RawReply(
                headers=[JSON_TYPE, (b"request-id", b"req_caf\xe9\x01")],
                chunks=[json.dumps(CLAUDE, ensure_ascii=False).encode()],
            ),
            id="latin-1-header",
        ),
        pytest.param(
            RawReply(
                headers=[JSON_TYPE, (b"content-encoding", b"gzip")],
                chunks=[gzip.compress(json.dumps(CLAUDE).encode())],
            ),
            id="gzip",
        ),
        pytest.param(
            RawReply(
                status=529,
                headers=[(b"content-type", b"text/html; charset=windows-1252")],
                chunks=["<h1>Overloaded – try later</h1>".encode("cp1252")],
            ),
            id="html-529",
        ),
    ],
)
def test_anthropic_answers_replay_as_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reply: RawReply
) -> None:
    """The anthropic SDK: odd header bytes, gzip, an HTML overload page in cp1252."""
    live, replayed = _record_then_replay(tmp_path, monkeypatch, reply, _claude_call)
    assert replayed == live
