"""The cassette store: the file on disk and the in-memory cassette read from it.

    cassette = load_cassette("cassettes/test_weather.yaml")   # validated, digests checked
    file = CassetteFile(path)                                # writes: atomic, locked, appends

One way in and one way out for every byte of a cassette: ``_yaml`` (the only YAML loader and
dumper), ``_read`` and ``_parse`` (validate a document, build interactions), ``_file`` (record
and append under ``_lock``, replace through ``_atomic``, carry a tail over with ``_tail``),
``_manifest`` (versions and drift), ``_runs`` (which run wrote what), ``_rehash`` and
``_cassette`` (the digest index and play state).
"""

from __future__ import annotations

from cassettes_core.store._atomic import atomic_write
from cassettes_core.store._cassette import Cassette, Lookup
from cassettes_core.store._file import (
    BOOKKEEPING_KEYS,
    CHECK_KEY,
    CassetteFile,
    WriteGuard,
    check_permissions,
    check_writable,
    lock_for,
)
from cassettes_core.store._manifest import (
    CassetteVersionWarning,
    DriftPolicy,
    Manifest,
    VersionDrift,
    check_drift_policy,
    drift_on_load,
)
from cassettes_core.store._parse import parse_interaction
from cassettes_core.store._read import (
    Snapshot,
    check_document,
    load_cassette,
    parse_yaml,
    read_document,
    read_snapshot,
    read_text,
    render,
    require_regular_file,
)
from cassettes_core.store._rehash import rehash
from cassettes_core.store._runs import PROCESS_STARTED, PROCESS_TOKEN, RecordRun, RunMark, run_began
from cassettes_core.store._tail import own_layout
from cassettes_core.store._yaml import MAX_DEPTH, MAX_INT_DIGITS, depth_of
from cassettes_core.store._yaml import dump as dump_yaml
from cassettes_core.store._yaml import load as load_yaml

__all__ = [
    "BOOKKEEPING_KEYS",
    "CHECK_KEY",
    "MAX_DEPTH",
    "MAX_INT_DIGITS",
    "PROCESS_STARTED",
    "PROCESS_TOKEN",
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
    "load_cassette",
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
]
