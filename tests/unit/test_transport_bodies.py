"""Bodies as stored and as replayed: charsets, empty and binary bodies, wire framing headers."""

from __future__ import annotations

from typing import Any

import pytest

from cassettes_core import ConfigError, UnrecordableAnswerError
from cassettes_core.transport import (
    charset_of,
    encoded_body,
    replay_headers,
    served_answer,
    stored_body,
)


@pytest.mark.parametrize(
    ("content_type", "charset"),
    [
        pytest.param(None, "utf-8", id="none"),
        pytest.param("application/json", "utf-8", id="no-charset"),
        pytest.param("text/html; charset=ISO-8859-1", "iso8859-1", id="latin-1"),
        pytest.param('text/plain; charset="utf-16"', "utf-16", id="quoted"),
        pytest.param("text/plain; charset=no-such-codec", "utf-8", id="unknown"),
        pytest.param("text/plain;CHARSET=cp1252", "cp1252", id="case"),
    ],
)
def test_charset_of(content_type: str | None, charset: str) -> None:
    """The codec a content type names, UTF-8 when it names none or one Python lacks."""
    assert charset_of(content_type) == charset


@pytest.mark.parametrize(
    ("content", "content_type", "stored"),
    [
        pytest.param(b"", None, None, id="empty"),
        pytest.param(b'{"a": "\xc3\xa9"}', "application/json", {"a": "é"}, id="json"),
        pytest.param(b"[1, 2]", None, [1, 2], id="array"),
        pytest.param(b"42", None, "42", id="scalar-json-stays-text"),
        pytest.param(b"{broken", None, "{broken", id="broken-json"),
        pytest.param(b"<h1>caf\xe9</h1>", "text/html; charset=latin-1", "<h1>café</h1>", id="html"),
        pytest.param(
            b'{"a": "caf\xe9"}', "application/json; charset=latin-1", '{"a": "café"}', id="raw"
        ),
        pytest.param(b'{"a": 1}', "application/json; charset=latin-1", {"a": 1}, id="ascii"),
    ],
)
def test_stored_body(content: bytes, content_type: str | None, stored: Any) -> None:
    """JSON structures parsed, other text kept, empty as None; non-ASCII JSON in another
    charset stays text so that it replays as the same bytes."""
    assert stored_body(content, content_type) == stored


@pytest.mark.parametrize(
    ("content", "content_type"),
    [
        pytest.param(bytes(range(256)), "application/octet-stream", id="binary"),
        pytest.param(b"\xff\xfe\xfd", "application/json", id="invalid-utf-8"),
        pytest.param(b"\xd8\x00", "text/plain; charset=utf-16-be", id="lone-surrogate"),
    ],
)
def test_bytes_that_are_not_text_are_refused_unless_an_error(
    content: bytes, content_type: str
) -> None:
    """A success body that YAML text cannot hold unchanged is our ConfigError subclass, with
    a TIP; an error body (``lossy``) is stored as the text the SDKs read, with U+FFFD."""
    assert "\ufffd" in stored_body(content, content_type, lossy=True)
    with pytest.raises(UnrecordableAnswerError) as caught:
        stored_body(content, content_type, where=" to /v1/chat/completions")
    assert isinstance(caught.value, ConfigError)
    assert "/v1/chat/completions" in str(caught.value)
    assert "TIP:" in str(caught.value)


@pytest.mark.parametrize(
    ("content", "content_type"),
    [
        pytest.param("<p>naïve</p>".encode("latin-1"), "text/html; charset=iso-8859-1", id="l1"),
        pytest.param("東京".encode("utf-16"), "text/plain; charset=utf-16", id="utf-16"),
        pytest.param(b'{"x":"\xe2\x9c\x93"}', "application/json", id="json"),
        pytest.param(b"plain", None, id="plain"),
    ],
)
def test_stored_text_replays_as_the_same_bytes(content: bytes, content_type: str | None) -> None:
    """Decoded with the charset, encoded with it again: byte for byte."""
    headers = {"content-type": content_type} if content_type else {}
    _served, replayed = served_answer(headers, stored_body(content, content_type))
    assert replayed == content


def test_text_the_charset_cannot_hold_falls_back_to_utf8_and_says_so() -> None:
    """A hand-edited body with characters outside the declared charset still replays."""
    served, content = served_answer({"content-type": "text/plain; charset=latin-1"}, "€ 5")
    assert content == "€ 5".encode()
    assert (b"content-type", b"text/plain; charset=utf-8") in served


def test_structures_in_another_charset_are_ascii_json() -> None:
    """JSON parsers read bytes as UTF-8/16/32: escaped JSON parses the same in any charset."""
    content, charset = encoded_body({"a": "é"}, "iso8859-1")
    assert (content, charset) == (b'{"a":"\\u00e9"}', "iso8859-1")
    assert encoded_body({"a": "é"})[0] == '{"a":"é"}'.encode()
    assert encoded_body(None) == (b"", "utf-8")


def test_wire_framing_headers_are_never_served() -> None:
    """content-encoding/length and transfer-encoding describe bytes replay does not send."""
    stored = {
        "Content-Encoding": "gzip",
        "content-length": "3",
        "transfer-encoding": "chunked",
        "x-request-id": "req",
    }
    served, _ = served_answer(replay_headers(stored, 200), {"a": 1})
    names = {name for name, _ in served}
    assert names == {b"x-request-id", b"content-type"}


def test_header_values_are_served_as_utf8_bytes() -> None:
    """Any stored text (latin-1 decoded, control characters) encodes: no UnicodeEncodeError."""
    served, _ = served_answer({"x-a": "ÿþ\x80", "x-b": "a\x01b"}, None)
    assert served == [
        (b"x-a", "ÿþ\x80".encode()),
        (b"x-b", b"a\x01b"),
        (b"content-type", b"application/json"),
    ]
