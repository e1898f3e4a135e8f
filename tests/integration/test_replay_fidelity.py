"""Whatever a recording holds replays as the SDK saw it live, or recording refuses it up front:
headers with any bytes, bodies in any charset or content-encoding, HTML and empty error pages.

A loopback server answers with exactly scripted bytes; the real openai and anthropic SDKs
record through the cassette transport, then replay under ``CI=true`` with the server untouched
and equal ``model_dump()``s. Streams: ``test_replay_fidelity_streams.py``.
"""

from __future__ import annotations

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
from cassettes_core.transport.httpx2 import CassetteTransport
from tests.helpers.raw_http import RawReply, RawServer, raw_server
from tests.helpers.replay import MESSAGES, Headed, openai_client, outcome, record_then_replay

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


def _chat_call(server: RawServer, recorder: Recorder) -> Any:
    with openai_client(server, recorder) as client:
        raw = client.chat.completions.with_raw_response.create(model="gpt-4o", messages=MESSAGES)
        parsed = raw.parse()
        return Headed(parsed, dict(raw.headers))


# Names Python knows, but as no charset: bytes-to-bytes or text-to-text codecs, and idna, a
# text codec that fails on anything but a host name (as a UnicodeError, not a decode error).
NOT_A_CHARSET = ["rot13", "base64", "hex", "zlib", "idna", "punycode", "utf-7", "unicode_escape"]


def _reply(*headers: tuple[bytes, bytes], status: int = 200, body: bytes | None = None) -> RawReply:
    return RawReply(
        status=status, headers=list(headers), chunks=[_chat_bytes() if body is None else body]
    )


def _charset(name: str) -> tuple[bytes, bytes]:
    return (b"content-type", f"application/json; charset={name}".encode())


def _content(live: Any) -> bool:
    return bool(live["answer"]["choices"][0]["message"]["content"] == "Café, naïve, 東京 ✓")


def _status(code: int) -> Callable[[Any], bool]:
    return lambda live: bool(live[:3] == ("status-error", "InternalServerError", code))


_HTML_502 = "<html><body><h1>502 Bad Gateway</h1><p>naïve proxy</p></body></html>"
ODD_ANSWERS = [
    *[
        pytest.param(
            _reply(JSON_TYPE, (b"x-request-id", value)),
            lambda live: bool(live["headers"]["x-request-id"]),
            id=f"header-{name}",
        )
        for name, value in (
            ("utf-8", "café".encode()),
            ("latin-1", b"caf\xe9"),
            ("invalid-utf-8", b"\xff\xfe\x80\x81"),
            ("control-bytes", b"a\x01b\x7fc\tz"),
            ("cjk", "東京 ✓".encode()),
        )
    ],
    # UTF-8 and latin-1 values in one answer (the client then decodes all as latin-1).
    pytest.param(
        _reply(JSON_TYPE, (b"x-request-id", b"caf\xe9"), (b"x-ratelimit-note", "€".encode())),
        lambda live: True,
        id="mixed-header-encodings",
    ),
    # A JSON body in a declared charset (escaped, as JSON parsers need).
    *[
        pytest.param(
            _reply(_charset(name), body=_chat_bytes(ascii_only=True).decode().encode(name)),
            _content,
            id=f"charset-{name}",
        )
        for name in ("iso-8859-1", "utf-16")
    ],
    # A codec that is no charset is read as UTF-8, as an unknown one is (no LookupError).
    *[
        pytest.param(_reply(_charset(name)), _content, id=f"not-a-charset-{name}")
        for name in NOT_A_CHARSET
    ],
    # A proxy's HTML 502 page (not JSON, latin-1).
    pytest.param(
        _reply(
            (b"content-type", b"text/html; charset=iso-8859-1"),
            status=502,
            body=_HTML_502.encode("latin-1"),
        ),
        _status(502),
        id="html-502",
    ),
    # A 502 whose bytes are not UTF-8 (no charset declared): the SDK reads only its text, with
    # replacement characters; that is stored.
    pytest.param(
        _reply(
            (b"content-type", b"text/html"),
            status=502,
            body="<h1>caf\xe9 \x80</h1>".encode("latin-1"),
        ),
        _status(502),
        id="undeclared-latin-1-502",
    ),
    pytest.param(
        _reply((b"content-type", b"application/octet-stream"), status=502, body=bytes(range(256))),
        _status(502),
        id="binary-502",
    ),
    pytest.param(
        _reply((b"content-type", b"text/plain"), status=503, body=b""), _status(503), id="empty-503"
    ),
    # An empty success body (stored as null) makes the SDK fail exactly as it did live.
    pytest.param(_reply(JSON_TYPE, body=b""), lambda live: live[0] == "raised", id="empty-200"),
]


@pytest.mark.parametrize(("reply", "saw"), ODD_ANSWERS)
def test_an_odd_answer_replays_as_the_sdk_saw_it_live(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reply: RawReply, saw: Callable[[Any], bool]
) -> None:
    """Header values with any bytes, bodies in any charset (or a codec name that is none), HTML,
    undecodable and empty error pages, an empty 200: what the SDK made of it live (an answer
    or an error) is recorded and replays the same."""
    live, replayed = record_then_replay(tmp_path, monkeypatch, reply, _chat_call)
    assert saw(live)
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
    live, replayed = record_then_replay(tmp_path, monkeypatch, reply, _chat_call)
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
        live = outcome(lambda: _chat_call(server, Recorder(path, mode="record")))
    text = path.read_text(encoding="utf-8")
    edited = text.replace(
        "content-type: application/json",
        "content-type: application/json\n      content-encoding: gzip\n      content-length: '3'",
    )
    assert edited != text
    path.write_text(edited, encoding="utf-8")
    monkeypatch.setenv("CI", "true")
    with raw_server(RawReply(status=500)) as server:
        assert outcome(lambda: _chat_call(server, Recorder(path))) == live
        assert server.hits == 0


@pytest.mark.parametrize("charset", NOT_A_CHARSET)
def test_a_hand_edited_charset_that_is_no_text_encoding_replays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, charset: str
) -> None:
    """A cassette whose stored content-type was edited to such a codec still replays."""
    path = tmp_path / "c.yaml"
    reply = RawReply(headers=[JSON_TYPE], chunks=[_chat_bytes()])
    with raw_server(reply) as server:
        _chat_call(server, Recorder(path, mode="record"))
        text = path.read_text(encoding="utf-8")
        edited = text.replace(
            "content-type: application/json", f"content-type: 'application/json; charset={charset}'"
        )
        assert edited != text
        path.write_text(edited, encoding="utf-8")
        monkeypatch.setenv("CI", "true")
        replayed = _chat_call(server, Recorder(path))
        assert server.hits == 1
    assert replayed.value.choices[0].message.content == "Café, naïve, 東京 ✓"


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


def _claude_call(server: RawServer, recorder: Recorder) -> Any:
    http = httpx2.Client(transport=CassetteTransport(recorder))
    base = server.base_url.removesuffix("/v1")
    with anthropic.Anthropic(base_url=base, api_key="k", http_client=http, max_retries=0) as c:
        raw = c.messages.with_raw_response.create(
            model="claude-3-5-haiku-latest", max_tokens=10, messages=MESSAGES
        )
        return Headed(raw.parse(), dict(raw.headers))


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
    live, replayed = record_then_replay(tmp_path, monkeypatch, reply, _claude_call)
    assert replayed == live


@pytest.mark.parametrize(
    "headers",
    [
        pytest.param([(b"x-request-id", b"req_a"), (b"x-request-id", b"req_b")], id="request-id"),
        pytest.param(
            [
                (b"x-ratelimit-remaining-requests", b"9"),
                (b"X-RateLimit-Remaining-Requests", b"8"),
                (b"x-ratelimit-remaining-requests", "é".encode()),
            ],
            id="rate-limit-mixed-case-thrice",
        ),
    ],
)
def test_a_kept_header_sent_more_than_once_replays_every_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, headers: list[tuple[bytes, bytes]]
) -> None:
    """A header name repeated (a proxy adding its own request id) replays all its values, as
    the client joined them live (`a, b`), not only the last one."""
    reply = RawReply(headers=[JSON_TYPE, *headers], chunks=[_chat_bytes()])
    live, replayed = record_then_replay(tmp_path, monkeypatch, reply, _chat_call)
    assert replayed == live
    assert ", " in next(v for k, v in live["headers"].items() if k.startswith("x-r"))


def _score(text: str) -> bytes:
    """A chat answer carrying ``text`` as a raw JSON value (an extra field, and the content)."""
    return (
        b'{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o",'
        b'"x_score":' + text.encode() + b',"choices":[{"index":0,"finish_reason":"stop",'
        b'"message":{"role":"assistant","content":"h\\ud800i \\udfff"}}]}'
    )


@pytest.mark.parametrize(
    "value",
    [
        pytest.param("NaN", id="nan"),
        pytest.param("-Infinity", id="minus-infinity"),
        pytest.param("1e999", id="overflowing-float"),
        pytest.param("0.5", id="lone-surrogates-only"),
    ],
)
def test_json_the_sdk_parses_but_yaml_cannot_hold_is_kept_as_its_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    """NaN, Infinity and lone surrogates (`\\ud800`) parse in Python's JSON, not in a YAML
    cassette: the body is stored as its text and replays the same (no refusal)."""
    reply = RawReply(headers=[JSON_TYPE], chunks=[_score(value)])
    live, replayed = record_then_replay(tmp_path, monkeypatch, reply, _chat_call)
    assert repr(replayed) == repr(live)  # repr: NaN is never equal to itself
    assert live["answer"]["choices"][0]["message"]["content"] == "h\ud800i \udfff"
    stored = load_cassette(tmp_path / "c.yaml")
    assert stored is not None
    response = stored.interactions[0].response
    assert response is not None
    assert response.body == _score(value).decode()


@pytest.mark.parametrize("status", [307, 308])
@pytest.mark.parametrize("follow", [True, False], ids=["followed", "not-followed"])
def test_a_redirect_replays_as_it_went_live(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, status: int, follow: bool
) -> None:
    """A proxy's 307/308 to the same endpoint: a client that follows redirects gets the
    answer on replay too (the redirect keeps its `location`); one that does not, the same
    status error."""
    redirect = RawReply(
        status=status, headers=[JSON_TYPE, (b"location", b"/v1/chat/completions")], chunks=[b"{}"]
    )
    answer = RawReply(headers=[JSON_TYPE], chunks=[_chat_bytes()])

    def call(server: RawServer, recorder: Recorder) -> Any:
        http = httpx2.Client(transport=CassetteTransport(recorder), follow_redirects=follow)
        with openai.OpenAI(
            base_url=server.base_url, api_key="k", http_client=http, max_retries=0
        ) as client:
            return client.chat.completions.create(model="gpt-4o", messages=MESSAGES)

    path = tmp_path / "c.yaml"
    with raw_server(redirect, answer) as server:
        live = outcome(lambda: call(server, Recorder(path, mode="record")))
        hits = server.hits
        monkeypatch.setenv("CI", "true")
        assert outcome(lambda: call(server, Recorder(path))) == live
        assert server.hits == hits
    assert hits == (2 if follow else 1)
    assert isinstance(live, tuple) is not follow  # a status error when not followed


@pytest.mark.parametrize("status", [301, 302, 303])
@pytest.mark.parametrize("follow", [True, False], ids=["followed", "not-followed"])
def test_a_redirect_that_turns_the_post_into_a_get_is_refused_up_front(
    tmp_path: Path, status: int, follow: bool
) -> None:
    """A 301/302/303 (an http:// base URL sent to https://) makes the client re-send the call
    as a GET, which no cassette holds: recording refuses it naming the target, writes nothing,
    and so no replay can ever follow it to a live server."""
    redirect = RawReply(
        status=status,
        headers=[JSON_TYPE, (b"location", b"https://proxy.invalid/v1/chat/completions")],
        chunks=[b"{}"],
    )
    path = tmp_path / "c.yaml"
    http = httpx2.Client(
        transport=CassetteTransport(Recorder(path, mode="record")), follow_redirects=follow
    )
    with (
        raw_server(redirect) as server,
        openai.OpenAI(
            base_url=server.base_url, api_key="k", http_client=http, max_retries=0
        ) as client,
        pytest.raises(UnrecordableAnswerError) as caught,
    ):
        client.chat.completions.create(model="gpt-4o", messages=MESSAGES)
    text = str(caught.value)
    assert f"HTTP {status}" in text
    assert "https://proxy.invalid/v1/chat/completions" in text
    assert "Nothing was written" in text
    assert server.hits == 1
    assert not path.exists()
