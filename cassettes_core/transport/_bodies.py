"""Response bodies and headers as a cassette stores them, and the bytes they replay as.

A body is stored as text decoded in the charset its ``content-type`` names (UTF-8 when it
names none), JSON objects and arrays as structures; on replay it is encoded in that same
charset again, so a latin-1 or UTF-16 answer gives the SDK the bytes it parsed live. A body
whose bytes are not text in that charset (binary, or mislabelled) cannot be stored as YAML
text without changing it, so recording refuses a successful answer like that up front
(:class:`UnrecordableAnswerError`) rather than writing something that replays differently.
An error answer is different: the SDKs only ever read its text, decoded with replacement
characters, so that text is stored and an undecodable 502 page is still recorded.

Bodies are stored decoded: ``content-encoding`` (gzip, br …) was undone by the HTTP client, so
replay never serves it (nor a stale ``content-length``) over the decoded bytes.

Header values are stored as the HTTP client decoded them (ASCII, else UTF-8, else latin-1)
and replayed as UTF-8 bytes, which every client decodes back to the same text: no value,
whatever its bytes, makes a replay raise ``UnicodeEncodeError``.
"""

from __future__ import annotations

import codecs
import functools
import json
from collections.abc import Mapping
from typing import Any

from cassettes_core._errors import UnrecordableAnswerError
from cassettes_core.transport._sse import compact_json, json_structure

JSON = "application/json"
# Headers that describe the bytes on the wire, not the decoded body a replay serves.
_WIRE_FRAMING = frozenset({"content-encoding", "content-length", "transfer-encoding"})


@functools.lru_cache(maxsize=256)  # a handful of content types; replay asks once per answer
def charset_of(content_type: str | None) -> str:
    """The codec a ``content-type`` names (``utf-8`` when none, or one Python lacks)."""
    for part in (content_type or "").split(";")[1:]:
        name, _, value = part.partition("=")
        if name.strip().lower() == "charset":
            charset = value.strip().strip("\"'")
            try:
                codec = codecs.lookup(charset).name
            except LookupError:
                return "utf-8"
            return codec if _is_charset(codec) else "utf-8"
    return "utf-8"


# JSON's punctuation, escapes and a run longer than a host-name label.
_PROBE = '{"id": "call_a-b+c.d", "n": [1.5e3, true], "s": "\\n\\u00e9 ~"} ' + "x" * 70


def _is_charset(codec: str) -> bool:
    """Whether ``codec`` reads JSON text as JSON parsers do: ASCII as ASCII (or UTF-8 with a
    BOM, UTF-16, UTF-32).

    Python also knows codecs that are no charset: bytes-to-bytes (base64, zlib), text-to-text
    (rot13), and text codecs that rewrite ASCII (idna, punycode, utf-7, unicode_escape).
    """
    try:
        encoded = _PROBE.encode(codec)
        if encoded.decode(codec) != _PROBE:
            return False
    except (LookupError, UnicodeError):
        return False
    return encoded == _PROBE.encode("ascii") or codec.startswith(("utf-8", "utf-16", "utf-32"))


def stored_body(
    content: bytes, content_type: str | None = None, *, where: str = "", lossy: bool = False
) -> Any:
    """A body as stored: parsed JSON objects and arrays, other text as text, empty as None.

    Raises :class:`UnrecordableAnswerError` for bytes that are not text in their charset,
    unless ``lossy`` (an error answer): the SDKs read an error body only as text, decoded with
    replacement characters, so that text is what is stored and what they read on replay.
    """
    if not content:
        return None
    charset = charset_of(content_type)
    try:
        text = content.decode(charset)
    except UnicodeError:  # some codecs fail with a plain UnicodeError, not a decode error
        if lossy:
            text = content.decode(charset, errors="replace")
            return _structured(text, charset)
        raise UnrecordableAnswerError(
            f"the live answer{where} is not {charset} text (content-type "
            f"{content_type or 'not given'}, {len(content)} bytes): a cassette stores bodies "
            "as text, so it could not replay these bytes unchanged. Nothing was written.\n"
            "TIP: record only text answers (the provider endpoints send JSON); if the "
            "provider sent a wrong charset, fix the content-type it answers with."
        ) from None
    return _structured(text, charset)


def _structured(text: str, charset: str) -> Any:
    # Non-ASCII JSON in another charset stays text: re-encoded as a structure it would give
    # the SDK other bytes than it parsed (or failed to parse) live.
    structured = charset == "utf-8" or text.isascii()
    if structured and text.lstrip()[:1] in ("{", "["):
        value = json_structure(text)
        if value is not None:
            return value
    return text


def encoded_body(body: Any, charset: str = "utf-8") -> tuple[bytes, str]:
    """The bytes of a stored body in ``charset`` (a name as :func:`charset_of` gives it), and
    the charset they are in.

    Text the charset cannot hold (a cassette edited by hand) falls back to UTF-8.
    """
    if body is None:
        return b"", charset
    if isinstance(body, str):
        text = body
    elif charset == "utf-8":
        text = compact_json(body)
    else:
        # JSON parsers read bytes as UTF-8/16/32 whatever the charset says: escaped, the
        # structure parses the same in any charset that holds ASCII.
        text = json.dumps(body, separators=(",", ":"), ensure_ascii=True)
    try:
        return text.encode(charset), charset
    except UnicodeError:  # some codecs fail with a plain UnicodeError
        return text.encode("utf-8"), "utf-8"


def served_answer(headers: Mapping[str, str], body: Any) -> tuple[list[tuple[bytes, bytes]], bytes]:
    """Wire headers and body bytes for a replayed complete answer (``headers`` lower-cased,
    as ``replay_headers`` gives them)."""
    content_type = headers.get("content-type")
    if content_type is None:
        content_type = "text/plain; charset=utf-8" if isinstance(body, str) else JSON
    charset = charset_of(content_type)
    content, used = encoded_body(body, charset)
    if used != charset:
        content_type = f"{content_type.split(';')[0].strip()}; charset={used}"
    served = [  # UTF-8 bytes: any stored text round-trips through the client
        (name.encode("utf-8"), value.encode("utf-8"))
        for name, value in headers.items()
        if name not in _WIRE_FRAMING and name != "content-type"
    ]
    served.append((b"content-type", content_type.encode("utf-8")))
    return served, content
