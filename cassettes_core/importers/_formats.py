"""The other tools' cassette formats, read into one shape: :class:`Exchange` (an HTTP call).

- **vcrpy / pytest-recording** (YAML or JSON): ``request.body`` is text, bytes (``!!binary``)
  or ``null``; ``response.body.string`` likewise; ``response.status`` is ``{code, message}``;
  headers map a name to a list of values. The custom serializers of large projects keep JSON
  bodies parsed under ``parsed_body`` (pydantic-ai) instead of ``body``.
- **cassetter**: ``body`` is ``{type: none | json | text | binary, content}`` (binary as hex),
  ``response.status`` an integer.

Anything else in an interaction is kept out; an interaction this module cannot read at all is
returned as a :class:`Skipped`, never dropped.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from cassettes_core._errors import CassetteFormatError

Format = Literal["vcrpy", "cassetter"]
PARSED = "parsed"  # a body kept parsed (JSON structure), not as text or bytes


@dataclass(frozen=True)
class Body:
    """A body as the foreign file kept it: ``raw`` bytes or text, or ``parsed`` JSON."""

    raw: bytes | str | None = None
    parsed: Any = None
    is_parsed: bool = False


@dataclass(frozen=True)
class Exchange:
    """One recorded HTTP call of a foreign cassette (``index``: its place in the file)."""

    index: int
    method: str
    uri: str
    request_headers: Mapping[str, list[str]] = field(default_factory=dict)
    request_body: Body = field(default_factory=Body)
    status: int = 200
    response_headers: Mapping[str, list[str]] = field(default_factory=dict)
    response_body: Body = field(default_factory=Body)


@dataclass(frozen=True)
class Skipped:
    """An interaction that was not converted, and why (listed, never silently dropped)."""

    index: int
    what: str
    reason: str


def exchanges(document: Any, path: Path) -> tuple[Format, list[Exchange | Skipped]]:
    """The HTTP calls of a foreign cassette document, in file order."""
    if not isinstance(document, Mapping) or not isinstance(document.get("interactions"), list):
        raise CassetteFormatError(
            path,
            "is not a vcrpy, pytest-recording or cassetter cassette (no 'interactions' list)",
        )
    items = document["interactions"]
    if "manifest" in document and any(isinstance(i, Mapping) and "digest" in i for i in items):
        raise CassetteFormatError(
            path, "is already a provider-cassettes cassette; there is nothing to import"
        )
    kind: Format = "cassetter" if _looks_cassetter(items) else "vcrpy"
    found: list[Exchange | Skipped] = []
    for index, item in enumerate(items):
        try:
            found.append(_exchange(index, item, kind))
        except _UnreadableError as exc:
            found.append(Skipped(index, _what(item), str(exc)))
    for extra in ("grpc_interactions", "ws_interactions"):
        for n, _item in enumerate(document.get(extra) or []):
            name = extra.removesuffix("_interactions")
            found.append(Skipped(len(items) + n, f"{name} interaction", f"{name} is not imported"))
    return kind, found


class _UnreadableError(Exception):
    pass


def _looks_cassetter(items: list[Any]) -> bool:
    for item in items:
        request = item.get("request") if isinstance(item, Mapping) else None
        body = request.get("body") if isinstance(request, Mapping) else None
        if isinstance(body, Mapping) and "type" in body:
            return True
        response = item.get("response") if isinstance(item, Mapping) else None
        if isinstance(response, Mapping) and isinstance(response.get("status"), int):
            return True
    return False


def _what(item: Any) -> str:
    request = item.get("request") if isinstance(item, Mapping) else None
    if isinstance(request, Mapping):
        return f"{request.get('method', '?')} {shown_uri(str(request.get('uri', '?')))}"
    return "an interaction"


def shown_uri(uri: str) -> str:
    """``uri`` as it may be printed: no query or fragment (a key may ride in them), no
    ``user:password@``, and a path that looks like it holds a secret (``/bot<token>/``) cut."""
    from urllib.parse import urlsplit

    from cassettes_core.secrets import SecretGuard

    bare = uri.split("?", 1)[0].split("#", 1)[0]
    try:
        parts = urlsplit(bare)
    except ValueError:
        return "an unreadable uri"
    host = parts.hostname or ""
    head = f"{parts.scheme}://{host}" if parts.scheme else host
    if SecretGuard().scan_text(parts.path.replace("/", "\n")) or _TOKEN_LIKE.search(parts.path):
        return f"{head}/… (its path holds what looks like a secret)"
    return head + (f":{parts.port}" if _port(parts) else "") + parts.path


# A run of 20+ letters, digits, '-' or '_' mixing letters and digits: a token glued into a path
# (`/bot<token>/`) that no detector anchors on; ids such as UUIDs are hidden too, which is safe.
_TOKEN_LIKE = re.compile(r"(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[\w-]{20,}")


def _port(parts: Any) -> int | None:
    try:
        port: int | None = parts.port
    except ValueError:
        return None
    return port


def _exchange(index: int, item: Any, kind: Format) -> Exchange:
    if not isinstance(item, Mapping):
        raise _UnreadableError("not a mapping")
    request, response = item.get("request"), item.get("response")
    if not isinstance(request, Mapping) or not isinstance(response, Mapping):
        raise _UnreadableError("needs a 'request' and a 'response' mapping")
    method, uri = request.get("method"), request.get("uri")
    if not isinstance(method, str) or not isinstance(uri, str):
        raise _UnreadableError("the request has no method or uri")
    reader = _cassetter_body if kind == "cassetter" else _vcr_body
    return Exchange(
        index=index,
        method=method.upper(),
        uri=uri,
        request_headers=_headers(request.get("headers")),
        request_body=reader(request, response=False),
        status=_status(response.get("status")),
        response_headers=_headers(response.get("headers")),
        response_body=reader(response, response=True),
    )


def _headers(raw: Any) -> dict[str, list[str]]:
    if not isinstance(raw, Mapping):
        return {}
    out: dict[str, list[str]] = {}
    for name, value in raw.items():
        values = value if isinstance(value, list) else [value]
        out[str(name).lower()] = [str(v) for v in values if v is not None]
    return out


def _status(raw: Any) -> int:
    code = raw.get("code") if isinstance(raw, Mapping) else raw
    if isinstance(code, str) and code.isdigit():
        code = int(code)
    if not isinstance(code, int) or isinstance(code, bool) or not 100 <= code <= 999:
        raise _UnreadableError(f"the response status {raw!r} is not an HTTP status")
    return code


def _vcr_body(side: Mapping[str, Any], *, response: bool) -> Body:
    if "parsed_body" in side:
        return Body(parsed=side["parsed_body"], is_parsed=True)
    body = side.get("body")
    if response:
        if isinstance(body, Mapping):
            body = body.get("string", body.get("base64_string"))
        elif body is None and "content" in side:  # older httpx stubs kept `content`
            body = side.get("content")
    if body is None or isinstance(body, bytes | str):
        return Body(raw=body)
    if isinstance(body, Mapping | list):  # a serializer that kept JSON parsed under `body`
        return Body(parsed=body, is_parsed=True)
    raise _UnreadableError(f"a body of type {type(body).__name__} cannot be read")


def _cassetter_body(side: Mapping[str, Any], *, response: bool) -> Body:
    body = side.get("body")
    if body is None:
        return Body()
    if not isinstance(body, Mapping):
        return _vcr_body(side, response=response)
    kind, content = body.get("type"), body.get("content")
    if kind in (None, "none"):
        return Body()
    if kind == "json":
        return Body(parsed=content, is_parsed=True)
    if kind == "text":
        return Body(raw="" if content is None else str(content))
    if kind == "binary":
        try:
            return Body(raw=bytes.fromhex(str(content or "")))
        except ValueError:
            raise _UnreadableError("a binary body is not hex") from None
    raise _UnreadableError(f"a body of type {kind!r} is not known")
