"""The cassette format: a YAML document checked into interactions, and interactions rendered back.

Nothing here lets a ``KeyError``/``TypeError`` out: every defect is a
:class:`~cassettes_core._errors.CassetteFormatError` naming the file and the place (the
interaction and its line). A digest that does not match its stored request means the file was
edited by hand. Any valid YAML layout is read the same: block or flow style, keys in any
order, CRLF line ends, with or without a final newline.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast, get_args

from cassettes_core._errors import CassetteFormatError, ConfigError, ErrorKind
from cassettes_core._model import Interaction, LLMResponse, RecordedError, StreamEvent
from cassettes_core._request import LLMRequest
from cassettes_core.digest import MAX_DEPTH, request_digest
from cassettes_core.store._manifest import Manifest

FORMAT_VERSION = 1
_ERROR_KINDS = frozenset(get_args(ErrorKind))


class _DefectError(Exception):
    """Internal: a defect in one interaction, turned into CassetteFormatError by the caller."""


def parse_interactions(
    raw: Any, path: Path, text: str, *, check_digests: bool = True, trusted: bool = False
) -> list[Interaction]:
    """The interactions of a parsed cassette; ``check_digests=False`` leaves hand-edited
    requests to whoever only reads them (``cassettes scan``); ``trusted``: a document this
    function accepted before (a cache entry of the very same bytes), its digests not
    computed again."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise CassetteFormatError(path, "'interactions' must be a list", location="interactions")
    interactions: list[Interaction] = []
    seen: dict[int, int] = {}
    for index, item in enumerate(raw):
        try:
            interaction = _parse_one(item, check_digest=check_digests, trusted=trusted)
        except _DefectError as exc:
            raise CassetteFormatError(path, str(exc), location=_where(text, index, item)) from None
        if interaction.seq in seen:
            raise CassetteFormatError(
                path,
                f"seq {interaction.seq} is used twice (interactions[{seen[interaction.seq]}] "
                f"and interactions[{index}]); every interaction needs its own seq",
                location=_where(text, index, item),
            )
        seen[interaction.seq] = index
        interactions.append(interaction)
    return interactions


def parse_interaction(
    item: Any, path: Path, *, location: str = "before_record result"
) -> Interaction:
    """One interaction from its plain form (a journal line, a ``before_record`` result)."""
    try:
        return _parse_one(item)
    except _DefectError as exc:
        raise CassetteFormatError(path, str(exc), location=location) from None


def _where(text: str, index: int, item: Any) -> str:
    parts = [f"interactions[{index}]"]
    if isinstance(item, Mapping) and isinstance(item.get("seq"), int):
        parts.append(f"seq {item['seq']}")
    from cassettes_core.store import _yaml  # YAML loads where a file is parsed or written

    line = _yaml.line_of_item(text, "interactions", index)
    if line is not None:
        parts.append(f"line {line}")
    return ", ".join(parts)


def _parse_one(item: Any, *, check_digest: bool = True, trusted: bool = False) -> Interaction:
    if not isinstance(item, Mapping):
        raise _DefectError("an interaction must be a mapping")
    seq = _require(item, "seq", int)
    if seq < 1:
        raise _DefectError(f"seq must be a positive integer, not {seq}")
    digest = _require(item, "digest", str)
    provider = _require(item, "provider", str)
    record = _require(item, "request", Mapping)
    endpoint = item.get("endpoint")
    if endpoint is not None and not isinstance(endpoint, str):
        raise _DefectError("'endpoint' must be a string")
    params = record.get("params")
    if params is not None and not isinstance(params, Mapping):
        raise _DefectError("'request.params' must be a mapping")
    request = LLMRequest.from_record(provider, record)
    redacted = item.get("redacted", False) is True
    try:
        actual = digest if trusted else request_digest(provider, request.fields)
    except ConfigError as exc:
        raise _DefectError(f"request cannot be digested: {exc}") from None
    if check_digest and actual != digest and not redacted:
        raise _DefectError(
            f"digest {digest[:12]}… does not match its request (now {actual[:12]}…): the "
            "request was edited after recording. Re-record it, or run "
            "`cassettes rehash FILE` if the edit was intended"
        )
    response, stream, error = _outcome(item)
    duration = item.get("duration_ms", 0)
    if not isinstance(duration, int | float) or isinstance(duration, bool):
        raise _DefectError("'duration_ms' must be a number")
    return Interaction(
        seq=seq,
        digest=digest,
        request=request,
        endpoint=endpoint,
        response=response,
        stream=stream,
        error=error,
        duration_ms=int(duration),
        redacted=redacted,
    )


def _outcome(
    item: Mapping[str, Any],
) -> tuple[LLMResponse | None, tuple[StreamEvent, ...] | None, RecordedError | None]:
    response = stream = error = None
    if "response" in item:
        raw = _require(item, "response", Mapping)
        status = _http_status(_require(raw, "status", int, where="response.status"), "response")
        if "body" not in raw:
            raise _DefectError("missing 'response.body' (is the file truncated?)")
        response = LLMResponse(
            body=raw.get("body"), status=status, headers=_headers(raw, "response.headers")
        )
    if "stream" in item:
        events = _require(item, "stream", list)
        stream = tuple(_event(event, n) for n, event in enumerate(events))
    if "error" in item:
        raw = _require(item, "error", Mapping)
        kind = raw.get("kind")
        if not isinstance(kind, str) or kind not in _ERROR_KINDS:
            raise _DefectError(f"error.kind must be one of {sorted(_ERROR_KINDS)}, not {kind!r}")
        status = raw.get("status")
        if status is not None and (not isinstance(status, int) or isinstance(status, bool)):
            raise _DefectError("'error.status' must be an integer")
        if status is not None:
            _http_status(status, "error")
        error = RecordedError(
            kind=cast("ErrorKind", kind),
            status=status,
            headers=_headers(raw, "error.headers"),
            body=raw.get("body"),
            message=str(raw.get("message") or ""),
        )
    if response is None and stream is None and error is None:
        raise _DefectError("has no 'response', 'stream' or 'error'")
    if response is not None and (stream is not None or error is not None):
        raise _DefectError("has a 'response' and also a 'stream' or 'error'; keep exactly one")
    return response, stream, error


def _http_status(status: int, where: str) -> int:
    # Three digits, as HTTP has them: anything else would replay an answer no server sends.
    if not 100 <= status <= 999:
        raise _DefectError(f"'{where}.status' {status} is not an HTTP status (100 to 999)")
    return status


def _event(raw: Any, index: int) -> StreamEvent:
    if not isinstance(raw, Mapping) or "data" not in raw:
        raise _DefectError(f"stream[{index}] must be a mapping with 'data'")
    name = raw.get("event")
    if name is not None and not isinstance(name, str):
        raise _DefectError(f"stream[{index}].event must be a string")
    t_ms = raw.get("t_ms")
    if t_ms is not None and (not isinstance(t_ms, int | float) or isinstance(t_ms, bool)):
        raise _DefectError(f"stream[{index}].t_ms must be a number")
    return StreamEvent(data=raw["data"], event=name, t_ms=None if t_ms is None else int(t_ms))


def _headers(raw: Mapping[str, Any], where: str) -> dict[str, str]:
    headers = raw.get("headers") or {}
    if not isinstance(headers, Mapping):
        raise _DefectError(f"'{where}' must be a mapping")
    for name, value in headers.items():
        if not isinstance(value, str | int | float) or isinstance(value, bool):
            raise _DefectError(f"'{where}.{name}' must be a string, not {type(value).__name__}")
    return {str(k): str(v) for k, v in headers.items()}


def _require(raw: Mapping[str, Any], key: str, kind: type, *, where: str | None = None) -> Any:
    if key not in raw:
        raise _DefectError(f"missing '{where or key}'")
    value = raw[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise _DefectError(
            f"'{where or key}' must be {_kind_name(kind)}, not {type(value).__name__}"
        )
    return value


def _kind_name(kind: type) -> str:
    return {int: "an integer", str: "a string", list: "a list"}.get(kind, "a mapping")


def load_plain_yaml(text: str, path: Path) -> Any:
    """``text`` as plain safe YAML, to tell another tool's file from a damaged cassette.

    Anchors and merge keys, which a cassette may not hold, are read here; a document that is
    not YAML even so is a :class:`CassetteFormatError`. Never use it to read a cassette.
    """
    from cassettes_core.store import _yaml

    try:
        return _yaml.load_plain(text)
    except ValueError as exc:
        raise CassetteFormatError(path, str(exc)) from None


def parse_yaml(text: str, path: Path) -> Any:
    """Parse a cassette's YAML text into JSON data; any defect is a CassetteFormatError."""
    # `from None`: the message carries the parser's problem; a chained parser traceback
    # would read as a foreign crash in a pytest failure.
    import yaml

    try:
        return load_yaml(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else None
        raise CassetteFormatError(
            path, f"not valid YAML ({exc.problem or exc.context})", location=where
        ) from None
    except yaml.reader.ReaderError as exc:
        raise CassetteFormatError(
            path,
            f"holds a character YAML does not allow ({exc.character!r}); is it a binary file?",
            location=f"character {exc.position + 1}",
        ) from None
    except yaml.YAMLError as exc:
        raise CassetteFormatError(path, f"not valid YAML ({exc})", location="top level") from None
    except RecursionError:
        raise CassetteFormatError(
            path,
            f"data nested too deeply (at most {MAX_DEPTH} levels are read)",
            location=_deep_place(text),
        ) from None
    except (ValueError, TypeError, KeyError, IndexError, OverflowError) as exc:
        # A last net under the loader's own checks: never a foreign traceback for a bad file.
        raise CassetteFormatError(
            path, f"not valid cassette YAML ({exc})", location="top level"
        ) from None


def _deep_place(text: str) -> str:
    """The first line nested past the limit, by indentation and open brackets (error path)."""
    flow = 0
    for number, line in enumerate(text.splitlines(), start=1):
        flow += line.count("[") + line.count("{") - line.count("]") - line.count("}")
        indent = len(line) - len(line.lstrip(" "))
        if indent // 2 + max(flow, 0) > MAX_DEPTH:
            return f"line {number}"
    return "the whole document"


def parse_document(text: str, path: Path) -> dict[str, Any]:
    """Parse YAML text into the top-level mapping, checking the format version."""
    document = parse_yaml(text, path)
    if not isinstance(document, dict):
        what = "empty" if document is None else f"a {type(document).__name__}"
        raise CassetteFormatError(
            path,
            f"the top level must be a mapping with 'version' and 'interactions' (the file is "
            f"{what})",
            location="top level",
        )
    check_version(document, path)
    return document


def check_version(document: dict[str, Any], path: Path) -> None:
    """The document's format version is one this library reads."""
    version = document.get("version")
    if version is None:
        raise CassetteFormatError(path, "no 'version' key", location="version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise CassetteFormatError(
            path, f"version {version!r} is not an integer", location="version"
        )
    if version > FORMAT_VERSION:
        raise CassetteFormatError(
            path,
            f"format version {version} is newer than this library reads ({FORMAT_VERSION}); "
            "upgrade provider-cassettes",
            location="version",
        )
    if version < 1:
        raise CassetteFormatError(path, f"unknown format version {version}", location="version")


def check_document(document: dict[str, Any], path: Path, text: str) -> None:
    """Everything a load refuses, except a digest that no longer matches its request: for
    readers that do not replay (``cassettes scan``), a hand-edited request is not a defect."""
    check_version(document, path)
    Manifest.from_dict(document.get("manifest") or {}, path)
    parse_interactions(document.get("interactions"), path, text, check_digests=False)


def render(manifest: Manifest, interactions: Sequence[Interaction]) -> str:
    document = {
        "version": FORMAT_VERSION,
        "manifest": manifest.to_dict(),
        "interactions": [interaction.to_dict() for interaction in interactions],
    }
    return dump_yaml(document)


# YAML (some 20 ms to import, most of it compiling its regexes) loads only where a file is
# parsed or written: a replay the load cache answers never needs it.


def load_yaml(text: str) -> Any:
    """A cassette's text as JSON data (what the loader refuses: ``_yaml``'s docstring)."""
    from cassettes_core.store import _yaml

    return _yaml.load(text)


def dump_yaml(document: Any) -> str:
    """``document`` as cassette YAML (block scalars for long text, no anchors)."""
    from cassettes_core.store import _yaml

    return _yaml.dump(document)


def first_comment_line(text: str) -> int | None:
    """The line (1-based) of the first YAML comment in ``text``, if any."""
    from cassettes_core.store import _yaml

    return _yaml.first_comment_line(text)
