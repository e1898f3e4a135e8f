"""Recompute the digests of a cassette whose requests were edited on purpose.

A digest that no longer matches its stored request makes the cassette fail to load: it is how
a hand edit or a bad merge is caught. When the edit was intended, rehashing accepts it: each
digest becomes the one of the request as it now stands, and the file is rewritten atomically
under its lock. Everything else in the file is kept as it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cassettes_core._errors import CassetteFormatError, ConfigError
from cassettes_core._request import PARAMS_KEY
from cassettes_core.digest import request_digest
from cassettes_core.store import _yaml
from cassettes_core.store._atomic import atomic_write
from cassettes_core.store._file import lock_for
from cassettes_core.store._manifest import Manifest
from cassettes_core.store._parse import parse_interactions
from cassettes_core.store._read import parse_document, read_text


def rehash(path: Path | str) -> tuple[int, int]:
    """Rewrite the stale digests of ``path``; returns (changed, interactions)."""
    path = Path(path)
    if read_text(path) is None:
        raise CassetteFormatError(path, "does not exist")
    lock = lock_for(path)
    try:
        lock.acquire()
    except OSError as exc:
        raise ConfigError(
            f"cannot lock {path} to rewrite it: {exc.strerror or exc}; the folder must be writable"
        ) from exc
    try:
        return _rehash_locked(path)
    finally:
        lock.release()


def _rehash_locked(path: Path) -> tuple[int, int]:
    text = read_text(path)
    if text is None:
        raise CassetteFormatError(path, "does not exist")
    document = parse_document(text, path)
    Manifest.from_dict(document.get("manifest") or {}, path)  # a bad manifest is reported too
    items = document.get("interactions") or []
    if not isinstance(items, list):
        raise CassetteFormatError(path, "'interactions' must be a list", location="interactions")
    changed = 0
    for index, item in enumerate(items):
        digest = _digest_of(item, path, index)
        if item.get("digest") != digest:
            item["digest"] = digest
            changed += 1
    rendered = _yaml.dump(document)
    # Whatever else is wrong with the file must still be reported, not written over.
    parse_interactions(_yaml.load(rendered).get("interactions"), path, rendered)
    if changed:
        try:
            atomic_write(path, rendered)
        except OSError as exc:
            raise ConfigError(f"cannot rewrite {path}: {exc.strerror or exc}") from exc
    return changed, len(items)


def _digest_of(item: Any, path: Path, index: int) -> str:
    if not isinstance(item, Mapping):
        raise CassetteFormatError(
            path, "an interaction must be a mapping", location=f"interactions[{index}]"
        )
    provider, request = item.get("provider"), item.get("request")
    if not isinstance(provider, str) or not isinstance(request, Mapping):
        raise CassetteFormatError(
            path, "needs 'provider' and 'request' to be rehashed", location=f"interactions[{index}]"
        )
    try:
        return request_digest(provider, {k: v for k, v in request.items() if k != PARAMS_KEY})
    except ConfigError as exc:
        raise CassetteFormatError(path, str(exc), location=f"interactions[{index}]") from None
