"""Reading another tool's cassette file safely: YAML (``!!binary`` included) or JSON.

Foreign files are untrusted: only safe YAML is read (no Python tags), aliases are refused
before anything is built (a "billion laughs" bomb would otherwise expand in memory), nesting
is bounded, and every defect is a :class:`CassetteFormatError` naming the file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from cassettes_core._errors import CassetteFormatError
from cassettes_core.store import MAX_DEPTH, require_regular_file

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
        return json.loads(text, object_pairs_hook=_unique_keys(path))
    except (ValueError, RecursionError) as exc:
        if isinstance(exc, CassetteFormatError):
            raise
        raise CassetteFormatError(path, f"is not valid JSON ({exc})") from None


def _unique_keys(path: Path) -> Any:
    def build(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out:
                raise CassetteFormatError(path, f"the JSON key {key!r} appears twice in one object")
            out[key] = value
        return out

    return build


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
