"""Bringing other tools' cassettes in: vcrpy, pytest-recording and cassetter files into ours.

    from cassettes_core.importers import import_file, plan_import

    kind, interactions, skipped = plan_import(Path("tests/cassettes/test_chat.yaml"))

Provider calls are recognised through the catalog, bodies decoded (gzip, ``!!binary``, kept
parsed under ``parsed_body``), streams split into events, digests computed; what cannot be
converted (calls to other hosts, bodies that are not JSON, undecodable answers) comes back as
:class:`Skipped`, never dropped. Writing goes through the store, behind the secret guard.

The foreign formats are read into one shape, :class:`Exchange` (an HTTP call):

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

import json
import math
import re
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from cassettes_core import catalog
from cassettes_core._errors import CassetteError, CassetteFormatError, ConfigError
from cassettes_core._model import Interaction, LLMResponse, RecordedError
from cassettes_core._request import LLMRequest
from cassettes_core.review import cassette_files
from cassettes_core.store import MAX_DEPTH, CassetteFile, WriteGuard, require_regular_file
from cassettes_core.transport import (
    is_event_stream,
    kept_headers,
    match_route,
    parse_stream,
    stored_body,
)

Format = Literal["vcrpy", "cassetter"]


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
    try:
        port = f":{parts.port}" if parts.port else ""
    except ValueError:  # a port that is no number
        port = ""
    return head + port + parts.path


# A run of 20+ letters, digits, '-' or '_' mixing letters and digits: a token glued into a path
# (`/bot<token>/`) that no detector anchors on; ids such as UUIDs are hidden too, which is safe.
_TOKEN_LIKE = re.compile(r"(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[\w-]{20,}")


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


# -- reading a foreign file: untrusted, so safe YAML only (``!!binary`` included), no aliases
# (a "billion laughs" bomb), bounded nesting; every defect a CassetteFormatError naming it.
MAX_BYTES = 256 * 1024 * 1024  # a cassette larger than this is not one anybody recorded

try:  # the C loader when PyYAML has it: large vcrpy files load several times faster
    _Base: type[yaml.SafeLoader] = yaml.CSafeLoader  # type: ignore[assignment,unused-ignore]
except AttributeError:  # pragma: no cover - PyYAML built without libyaml
    _Base = yaml.SafeLoader


class _Loader(_Base):  # type: ignore[valid-type,misc]
    """Safe YAML that refuses a key given twice in one mapping (PyYAML keeps the last one
    silently: the first ``response`` of an interaction would vanish unseen)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _value in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                twice = key in seen
                seen.add(key)
            except TypeError:  # an unhashable key: the base class reports it
                continue
            if twice:
                raise yaml.constructor.ConstructorError(
                    None, None, f"the key {key!r} appears twice in one mapping", key_node.start_mark
                )
        return super().construct_mapping(node, deep=deep)  # type: ignore[no-any-return]


def read_foreign(path: Path) -> Any:
    """The parsed document of a vcrpy / pytest-recording / cassetter file at ``path``."""
    require_regular_file(path)
    try:
        if path.is_dir():
            raise CassetteFormatError(path, "is a directory, not a cassette file")
        if path.stat().st_size > MAX_BYTES:
            raise CassetteFormatError(path, f"is larger than {MAX_BYTES // 2**20} MB")
        raw = path.read_bytes()
    except FileNotFoundError:
        raise CassetteFormatError(path, "does not exist") from None
    except OSError as exc:
        raise CassetteFormatError(path, f"cannot be read ({exc.strerror or exc})") from None
    if raw.startswith(b"\x1f\x8b"):
        raise CassetteFormatError(
            path, "is gzip-compressed (a .yaml.gz persister); decompress it first (gunzip -k)"
        )
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CassetteFormatError(
            path, f"is not UTF-8 text (byte {exc.start}); is it a binary file?"
        ) from None
    if path.suffix.lower() == ".json" or text.lstrip().startswith(("{", "[")):
        return _json(text, path)
    return _yaml(text, path)


def _json(text: str, path: Path) -> Any:
    try:
        return json.loads(text, object_pairs_hook=_once)
    except _NotConvertedError as exc:
        raise CassetteFormatError(path, f"has {exc} (JSON)") from None
    except (ValueError, RecursionError) as exc:
        raise CassetteFormatError(path, f"is not valid JSON ({exc})") from None


def _yaml(text: str, path: Path) -> Any:
    try:
        depth = 0
        for event in yaml.parse(text, Loader=_Loader):
            if isinstance(event, yaml.AliasEvent):
                raise CassetteFormatError(
                    path,
                    "uses YAML aliases (*name); vcrpy never writes them, and they can expand "
                    "without bound, so the file is not read",
                )
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_DEPTH:
                    raise CassetteFormatError(
                        path, f"data nested too deeply (at most {MAX_DEPTH} levels are read)"
                    )
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
        return yaml.load(text, Loader=_Loader)  # noqa: S506 -- a safe loader
    except yaml.constructor.ConstructorError as exc:
        if "appears twice" in str(exc.problem):
            raise CassetteFormatError(path, f"{exc.problem} ({exc.problem_mark})") from None
        raise CassetteFormatError(
            path,
            f"holds a YAML tag that safe YAML does not read ({exc.problem}); only plain data "
            "(and !!binary) is imported",
        ) from None
    except yaml.YAMLError as exc:
        raise CassetteFormatError(path, f"is not valid YAML ({exc})") from None
    except RecursionError:
        raise CassetteFormatError(path, "data nested too deeply") from None


# -- converting one call, as the transport would have recorded it: a provider call when the
# catalog recognises its method and path (any host); the request body must be a JSON object;
# the answer is decompressed, decoded, split into events when it is SSE. Request headers are
# never kept; response headers pass a live recording's allow-list.
class _NotConvertedError(Exception):
    pass


def convert(exchange: Exchange) -> Interaction | Skipped:
    """``exchange`` as an interaction (seq 0: the store numbers it), or why it is not one."""
    what = f"{exchange.method} {shown_uri(exchange.uri)}"
    route = match_route(exchange.method, exchange.uri)
    if route is None:
        return Skipped(exchange.index, what, "not a provider call the catalog knows")
    try:
        body = _request_body(exchange)
        if route.model is not None:
            body = {**body, "model": route.model}
        request = LLMRequest.from_body(route.provider, body)
        outcome = _outcome(exchange, route.provider)
    except _NotConvertedError as exc:
        return Skipped(exchange.index, what, str(exc))
    return Interaction(
        seq=0,
        digest=request.digest(),
        request=request,
        endpoint=route.endpoint,
        duration_ms=0,
        **outcome,
    )


def _bytes_of(body: Body, headers: Mapping[str, list[str]], side: str) -> bytes | None:
    raw = body.raw
    if raw is None:
        return None
    data = raw.encode("utf-8") if isinstance(raw, str) else raw
    encodings = [
        part.strip().lower()
        for value in headers.get("content-encoding", [])
        for part in value.split(",")
    ]
    try:
        for encoding in reversed(encodings):
            if encoding in ("gzip", "x-gzip") and data.startswith(b"\x1f\x8b"):
                data = _bounded(data, _GZIP, side)
            elif encoding == "deflate" and isinstance(raw, bytes):
                data = _inflate(data, side)
            elif encoding not in ("identity", "gzip", "x-gzip", "deflate"):
                raise _NotConvertedError(f"the {side} body is {encoding}-encoded, not read here")
        if data.startswith(b"\x1f\x8b"):  # gzip bytes whose header was dropped
            data = _bounded(data, _GZIP, side)
    except (OSError, EOFError, zlib.error) as exc:
        raise _NotConvertedError(f"the {side} body does not decompress ({exc})") from None
    return data


MAX_BODY = 256 * 1024 * 1024  # decompressed; a gzip "bomb" of a few KB would fill memory
_GZIP = 16 + zlib.MAX_WBITS  # zlib's window bits that read a gzip header


def _inflate(data: bytes, side: str) -> bytes:
    try:
        return _bounded(data, zlib.MAX_WBITS, side)
    except zlib.error:
        return _bounded(data, -zlib.MAX_WBITS, side)  # raw deflate, as some servers send


def _bounded(data: bytes, wbits: int, side: str) -> bytes:
    """``data`` decompressed, every gzip member of it, refused past :data:`MAX_BODY` bytes."""
    out: list[bytes] = []
    size = 0
    while data:
        engine = zlib.decompressobj(wbits)
        chunk = engine.decompress(data, MAX_BODY - size + 1)
        size += len(chunk)
        out.append(chunk)
        if size > MAX_BODY or engine.unconsumed_tail:
            raise _NotConvertedError(
                f"the {side} body decompresses to more than {MAX_BODY // 2**20} MB"
            )
        if not engine.eof:
            raise EOFError("the compressed data ends before its end marker")
        data = engine.unused_data if wbits == _GZIP else b""
    return b"".join(out)


def _request_body(exchange: Exchange) -> dict[str, Any]:
    body = exchange.request_body
    if body.is_parsed:
        value = body.parsed
    else:
        data = _bytes_of(body, exchange.request_headers, "request")
        if not data:
            raise _NotConvertedError("the request has no body to match it by")
        try:
            value = json.loads(data.decode("utf-8"), object_pairs_hook=_once)
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise _NotConvertedError("the request body is not JSON") from None
        except _NotConvertedError as exc:
            raise _NotConvertedError(f"the request body has {exc}") from None
    if not isinstance(value, dict):
        raise _NotConvertedError("the request body is not a JSON object")
    _require_json_data(value, "request")
    return value


def _once(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:  # which one the provider read is not known: never guessed
            raise _NotConvertedError(f"the key {key!r} twice in one object")
        out[key] = value
    return out


def _require_json_data(value: Any, side: str) -> None:
    """Refuse what no SDK sent or read as JSON: a YAML set, timestamp or ``!!binary`` kept
    parsed, NaN or infinity, a key that is not text."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            odd = [key for key in item if not isinstance(key, str)]
            if odd:
                raise _NotConvertedError(f"the {side} body has the key {odd[0]!r}, not JSON data")
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, float) and not math.isfinite(item):
            raise _NotConvertedError(f"the {side} body holds {item!r}, not JSON data")
        elif item is not None and not isinstance(item, str | int | float):
            raise _NotConvertedError(
                f"the {side} body holds a {type(item).__name__} (a YAML tag?), not JSON data"
            )


def _outcome(exchange: Exchange, provider: str) -> dict[str, Any]:
    headers = [
        (name, value) for name, values in exchange.response_headers.items() for value in values
    ]
    kept = kept_headers(headers)
    content_type = next(iter(exchange.response_headers.get("content-type", [])), None)
    status = exchange.status
    body = exchange.response_body
    if body.is_parsed:
        value: Any = body.parsed
        if isinstance(value, str) and _sse_text(value, content_type):
            return _stream(value.encode("utf-8"), provider)
        _require_json_data(value, "response")
    else:
        data = _bytes_of(body, exchange.response_headers, "response") or b""
        if status < 400 and (is_event_stream(content_type) or _sse_text(data[:16], None)):
            return _stream(data, provider)
        try:
            value = stored_body(data, content_type, lossy=status >= 400)
        except CassetteError as exc:
            raise _NotConvertedError(f"the answer cannot be stored as text ({exc})") from None
    if status >= 400:
        return {"error": RecordedError(kind="http_status", status=status, headers=kept, body=value)}
    return {"response": LLMResponse(body=value, status=status, headers=kept)}


def _sse_text(value: str | bytes, content_type: str | None) -> bool:
    if is_event_stream(content_type):
        return True
    head = value.lstrip()[:6] if isinstance(value, str) else value.lstrip()[:6].decode("latin-1")
    return head.startswith(("data:", "event:"))


def _stream(data: bytes, provider: str) -> dict[str, Any]:
    endpoint = catalog.current().get(provider)
    framing = endpoint.stream if endpoint is not None else "sse"
    if framing != "sse":
        raise _NotConvertedError(f"a {framing} stream is not imported")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        raise _NotConvertedError("the stream is not UTF-8 text") from None
    events = parse_stream([data])
    if not events:
        raise _NotConvertedError("the stream holds no complete event")
    return {"stream": events}


# -- importing one file: converted interactions pass the secret guard before the store writes
# them atomically; a file already there is kept unless ``force``; nothing converted, nothing
# written.
@dataclass(frozen=True)
class Imported:
    """What importing one file did: its format, what was written, and what was not."""

    source: Path
    target: Path | None
    format: Format
    converted: tuple[Interaction, ...]
    skipped: tuple[Skipped, ...]


def plan_import(source: Path) -> tuple[Format, list[Interaction], list[Skipped]]:
    """The interactions ``source`` converts to, and the calls it does not (nothing written)."""
    kind, found = exchanges(read_foreign(source), source)
    converted: list[Interaction] = []
    skipped: list[Skipped] = []
    for item in found:
        result = item if isinstance(item, Skipped) else convert(item)
        (skipped if isinstance(result, Skipped) else converted).append(result)  # type: ignore[arg-type]
    return kind, converted, skipped


def import_file(
    source: Path, target: Path, *, guard: WriteGuard, force: bool = False, dry_run: bool = False
) -> Imported:
    """Convert ``source`` into a cassette at ``target`` (kept if it exists, unless ``force``;
    nothing written on a ``dry_run``). The caller has refused a ``target`` that is an input
    (``cassettes import`` checks every planned output first)."""
    kind, converted, skipped = plan_import(source)
    if not converted or dry_run:
        return Imported(source, None, kind, tuple(converted), tuple(skipped))
    if (target.exists() or target.is_symlink()) and not force:
        raise ConfigError(
            f"{target} exists already; nothing was written\n"
            "TIP: pass --force to replace it, or choose another place with -o/--out-dir."
        )
    if target.is_dir():
        raise ConfigError(f"{target} is a directory\nTIP: give -o a file name ending in .yaml.")
    written = CassetteFile(target, guard=guard).append(converted, rewrite=True)
    return Imported(source, target, kind, tuple(written), tuple(skipped))


def foreign_files(paths: Iterable[str | Path]) -> list[tuple[Path, Path]]:
    """``(file, relative name)`` for each file named and each cassette-like file under each
    folder named (``*.yaml``, ``*.yml``, ``*.json``; hidden files aside)."""
    return [
        (path, Path(path.name) if named else path.relative_to(raw))
        for raw in paths
        for path, named in cassette_files([raw], suffixes=(".yaml", ".yml", ".json"))
    ]


__all__ = [
    "Body",
    "Exchange",
    "Format",
    "Imported",
    "Skipped",
    "convert",
    "exchanges",
    "foreign_files",
    "import_file",
    "plan_import",
    "read_foreign",
]
