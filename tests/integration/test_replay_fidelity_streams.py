"""Streams replay as the SDK parsed them live, whatever the server's SSE framing: CR/LF line
ends, ``data:`` without its space, comments, ``retry:``/``id:`` lines, split UTF-8, multi-line,
empty and non-JSON data; through the real openai (sync, async) and anthropic SDKs."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import openai
import pytest

from cassettes_core import Recorder
from cassettes_core.transport.httpx2 import AsyncCassetteTransport, CassetteTransport
from tests.helpers.raw_http import RawReply, RawServer, raw_server
from tests.helpers.replay import MESSAGES, openai_client, record_then_replay


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
    with openai_client(server, recorder) as client:
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
    live, replayed = record_then_replay(tmp_path, monkeypatch, reply, _stream_call)
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

    live, replayed = record_then_replay(tmp_path, monkeypatch, reply, raw_events)
    assert replayed == live
    assert live == [json.loads(_sse(_chunk("Ca"))), "", "plain words, not JSON", "42", "[DONE]"]


class _Lines(list[str]):
    """The data of each SSE event in raw stream bytes (JSON compared parsed)."""

    def __init__(self, raw: bytes) -> None:
        from cassettes_core.transport import encode_data, parse_stream

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

    live, replayed = record_then_replay(tmp_path, monkeypatch, reply, call)
    assert replayed == live


def _anthropic_events() -> list[bytes]:
    def event(name: str, data: dict[str, Any]) -> bytes:
        payload = _sse({"type": name, **data})
        return b"event: " + name.encode() + b"\r\ndata:" + payload + b"\r\n\r\n"

    message: dict[str, Any] = {
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

    live, replayed = record_then_replay(tmp_path, monkeypatch, reply, call)
    assert replayed == live
    assert any(getattr(e, "type", "") == "content_block_delta" for e in [*_Events(live)])


class _Events(list[Any]):
    """Dumped anthropic events, viewed as objects with a ``type``."""

    def __init__(self, dumps: list[dict[str, Any]]) -> None:
        super().__init__(type("E", (), {"type": d.get("type")})() for d in dumps)


def test_a_stream_that_is_not_utf8_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    """The SDK fails on bytes that are not UTF-8 live; a recording (with replacement
    characters) would replay a stream it never saw, so none is written and our error says
    why. U+FFFD sent as real UTF-8 is no reason to refuse."""
    from cassettes_core import UnrecordableAnswerError

    chunks = [b"data: " + _sse(_chunk("Ca")) + b"\n\n", b'data: {"x":"f\xe9"}\n\n']
    reply = RawReply(headers=[(b"content-type", b"text/event-stream")], chunks=_with_done(chunks))
    path = tmp_path / "c.yaml"
    with raw_server(reply) as server, pytest.raises(UnrecordableAnswerError) as caught:
        _stream_call(server, Recorder(path, mode="record"))
    assert "is not UTF-8 text" in str(caught.value)
    assert isinstance(caught.value.__context__, UnicodeDecodeError)  # what the SDK met live
    assert not path.exists()
    fine = [b"data: " + _sse(_chunk("\ufffd ok")) + b"\n\n"]
    reply = RawReply(headers=[(b"content-type", b"text/event-stream")], chunks=_with_done(fine))
    with raw_server(reply) as server:
        assert _stream_call(server, Recorder(path, mode="record"))
    assert path.exists()


@pytest.mark.parametrize(
    "raw_value",
    [
        pytest.param(b"NaN", id="nan"),
        pytest.param(b"Infinity", id="infinity"),
        pytest.param(b"1e999", id="overflowing-float"),
        pytest.param(b'"\\ud800"', id="lone-surrogate"),
    ],
)
def test_stream_data_that_yaml_cannot_hold_replays_as_its_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, raw_value: bytes
) -> None:
    """An event whose JSON holds NaN, Infinity or a lone surrogate (the SDK parses them) is
    kept as its text and replays the same, async and sync alike."""
    odd = b'{"id":"chatcmpl-s","object":"chat.completion.chunk","created":1,"model":"gpt-4o",'
    odd += b'"x_score":' + raw_value + b',"choices":[{"index":0,"delta":{"content":"\\udfff"},'
    odd += b'"finish_reason":null}]}'
    chunks = _with_done([b"data: " + _sse(_chunk("Ca")) + b"\n\n", b"data: " + odd + b"\n\n"])
    reply = RawReply(headers=[(b"content-type", b"text/event-stream")], chunks=chunks, chunked=True)
    live, replayed = record_then_replay(tmp_path, monkeypatch, reply, _stream_call)
    assert repr(replayed) == repr(live)  # repr: NaN is never equal to itself
    assert live[1]["choices"][0]["delta"]["content"] == "\udfff"
    raw = (tmp_path / "c.yaml").read_text(encoding="utf-8")
    assert "x_score" in raw


# Frames the SDKs' decoder (WHATWG rules) dispatches although they carry no data (an `id:`,
# which then sticks to every later blank line, or a `retry:`), or drops although they name
# an event (an empty `event:`). The openai SDK fails on an empty event live; so must replay.
DATA_LESS_FRAMES = {
    "id-only": [b"id: 1\n\n"],
    "retry-only": [b"retry: 100\n\n"],
    "id-sticks-to-later-blank-lines": [b"id: 7\ndata: " + _sse(_chunk("b")) + b"\n\n", b"\n"],
    "id-cleared-then-blank": [b"id: 7\n", b"id:\n\n", b"\n\n"],
    "id-with-nul-ignored": [b"id: a\x00b\n\n"],
    "retry-not-a-number-ignored": [b"retry: soon\n\n"],
    "empty-event-name": [b"event:\n\n", b"event: \n\n"],
}


@pytest.mark.parametrize("frames", sorted(DATA_LESS_FRAMES))
def test_frames_without_data_replay_as_the_sdk_decoded_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, frames: str
) -> None:
    """Whatever the SDK made of an id-only, retry-only or empty-event frame live (an empty
    event it fails on, or nothing), it makes of the replay: same chunks, same error."""
    chunks = [b"data: " + _sse(_chunk("a")) + b"\n\n", *DATA_LESS_FRAMES[frames]]
    chunks += [b"data: " + _sse(_chunk("c")) + b"\n\n", b"data: [DONE]\n\n"]
    reply = RawReply(headers=[(b"content-type", b"text/event-stream")], chunks=chunks, chunked=True)

    def call(server: RawServer, recorder: Recorder) -> _Seen:
        seen = _Seen()
        with openai_client(server, recorder) as client:
            try:
                for chunk in client.chat.completions.create(
                    model="gpt-4o", messages=MESSAGES, stream=True
                ):
                    seen.append(chunk.model_dump(warnings=False))
            except ValueError as exc:  # json.loads("") of an empty event
                seen.append(type(exc).__name__)
        return seen

    live, replayed = record_then_replay(tmp_path, monkeypatch, reply, call)
    assert replayed == live
    dispatched = frames in ("id-only", "retry-only", "id-sticks-to-later-blank-lines")
    assert (live[-1] == "JSONDecodeError") is dispatched


class _Seen(list[Any]):
    """What a caller saw of a stream: chunk dumps, then the error's name if it failed."""

    def model_dump(self, **options: Any) -> list[Any]:
        return list(self)
