"""The cassette store: the file on disk and the in-memory cassette read from it.

    from cassettes_core.store import CassetteFile, load_cassette

    cassette = load_cassette("cassettes/test_weather.yaml")   # validated, digests checked
    file = CassetteFile(path, guard=guard)                   # writes: atomic, locked, appends

This package owns every byte of a cassette, in and out; everyone else (the recorder, the
``cassettes`` command, ``cassette-refresh``) goes through the names below, never through a
``_`` module, and nothing outside it parses cassette YAML. Inside: ``_yaml`` (the only YAML
loader and dumper), ``_read`` and ``_parse`` (validate a document, build interactions),
``_file`` (record and append under ``_lock``, replace through ``_atomic``, carry a tail over
with ``_tail``), ``_state`` (what a write needs of the file on disk), ``_writable`` (refuse a
path that cannot be written, and say why), ``_manifest`` (versions and drift), ``_runs`` (which
run wrote what), ``_rehash`` and ``_cassette`` (the digest index and play state). It imports
only the core's model, request, errors, digest and version, never the recorder, the transport
or the secret guard (which it is handed, as a ``WriteGuard``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cassettes_core.store._atomic import atomic_write
    from cassettes_core.store._cassette import Cassette, Lookup
    from cassettes_core.store._file import CassetteFile, WriteGuard, lock_for
    from cassettes_core.store._manifest import (
        SESSION_DRIFT_POLICIES,
        CassetteVersionWarning,
        DriftPolicy,
        Manifest,
        VersionDrift,
        check_drift_policy,
        drift_on_load,
        installed_sdks,
        version_drift,
    )
    from cassettes_core.store._parse import parse_interaction
    from cassettes_core.store._read import (
        Snapshot,
        check_document,
        load_cassette,
        load_plain_yaml,
        parse_yaml,
        read_document,
        read_snapshot,
        read_text,
        render,
        require_regular_file,
    )
    from cassettes_core.store._rehash import rehash
    from cassettes_core.store._runs import (
        PROCESS_STARTED,
        PROCESS_TOKEN,
        RecordRun,
        RunMark,
        run_began,
    )
    from cassettes_core.store._state import BOOKKEEPING_KEYS, CHECK_KEY
    from cassettes_core.store._tail import own_layout
    from cassettes_core.store._writable import check_permissions, check_writable
    from cassettes_core.store._yaml import MAX_DEPTH, MAX_INT_DIGITS, depth_of, first_comment_line
    from cassettes_core.store._yaml import dump as dump_yaml
    from cassettes_core.store._yaml import load as load_yaml

# Each name's module, loaded on first use (PEP 562): replaying a cassette the load cache holds
# imports neither the writer (``_file`` and its helpers) nor YAML.
_LAZY: dict[str, tuple[str, str]] = {
    "atomic_write": ("_atomic", "atomic_write"),
    "Cassette": ("_cassette", "Cassette"),
    "Lookup": ("_cassette", "Lookup"),
    "CassetteFile": ("_file", "CassetteFile"),
    "WriteGuard": ("_file", "WriteGuard"),
    "lock_for": ("_file", "lock_for"),
    "SESSION_DRIFT_POLICIES": ("_manifest", "SESSION_DRIFT_POLICIES"),
    "CassetteVersionWarning": ("_manifest", "CassetteVersionWarning"),
    "DriftPolicy": ("_manifest", "DriftPolicy"),
    "Manifest": ("_manifest", "Manifest"),
    "VersionDrift": ("_manifest", "VersionDrift"),
    "check_drift_policy": ("_manifest", "check_drift_policy"),
    "drift_on_load": ("_manifest", "drift_on_load"),
    "installed_sdks": ("_manifest", "installed_sdks"),
    "version_drift": ("_manifest", "version_drift"),
    "parse_interaction": ("_parse", "parse_interaction"),
    "Snapshot": ("_read", "Snapshot"),
    "check_document": ("_read", "check_document"),
    "load_cassette": ("_read", "load_cassette"),
    "load_plain_yaml": ("_read", "load_plain_yaml"),
    "parse_yaml": ("_read", "parse_yaml"),
    "read_document": ("_read", "read_document"),
    "read_snapshot": ("_read", "read_snapshot"),
    "read_text": ("_read", "read_text"),
    "render": ("_read", "render"),
    "require_regular_file": ("_read", "require_regular_file"),
    "rehash": ("_rehash", "rehash"),
    "PROCESS_STARTED": ("_runs", "PROCESS_STARTED"),
    "PROCESS_TOKEN": ("_runs", "PROCESS_TOKEN"),
    "RecordRun": ("_runs", "RecordRun"),
    "RunMark": ("_runs", "RunMark"),
    "run_began": ("_runs", "run_began"),
    "BOOKKEEPING_KEYS": ("_state", "BOOKKEEPING_KEYS"),
    "CHECK_KEY": ("_state", "CHECK_KEY"),
    "own_layout": ("_tail", "own_layout"),
    "check_permissions": ("_writable", "check_permissions"),
    "check_writable": ("_writable", "check_writable"),
    "MAX_DEPTH": ("_yaml", "MAX_DEPTH"),
    "MAX_INT_DIGITS": ("_yaml", "MAX_INT_DIGITS"),
    "depth_of": ("_yaml", "depth_of"),
    "first_comment_line": ("_yaml", "first_comment_line"),
    "dump_yaml": ("_yaml", "dump"),
    "load_yaml": ("_yaml", "load"),
}


def __getattr__(name: str) -> Any:
    found = _LAZY.get(name)
    if found is None:
        raise AttributeError(f"module 'cassettes_core.store' has no attribute {name!r}")
    module, original = found
    value = getattr(importlib.import_module(f"cassettes_core.store.{module}"), original)
    globals()[name] = value
    return value


__all__ = [
    "BOOKKEEPING_KEYS",
    "CHECK_KEY",
    "MAX_DEPTH",
    "MAX_INT_DIGITS",
    "PROCESS_STARTED",
    "PROCESS_TOKEN",
    "SESSION_DRIFT_POLICIES",
    "Cassette",
    "CassetteFile",
    "CassetteVersionWarning",
    "DriftPolicy",
    "Lookup",
    "Manifest",
    "RecordRun",
    "RunMark",
    "Snapshot",
    "VersionDrift",
    "WriteGuard",
    "atomic_write",
    "check_document",
    "check_drift_policy",
    "check_permissions",
    "check_writable",
    "depth_of",
    "drift_on_load",
    "dump_yaml",
    "first_comment_line",
    "installed_sdks",
    "load_cassette",
    "load_plain_yaml",
    "load_yaml",
    "lock_for",
    "own_layout",
    "parse_interaction",
    "parse_yaml",
    "read_document",
    "read_snapshot",
    "read_text",
    "rehash",
    "render",
    "require_regular_file",
    "run_began",
    "version_drift",
]
