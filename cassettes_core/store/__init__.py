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
from cassettes_core.store._runs import PROCESS_STARTED, PROCESS_TOKEN, RecordRun, RunMark, run_began
from cassettes_core.store._state import BOOKKEEPING_KEYS, CHECK_KEY
from cassettes_core.store._tail import own_layout
from cassettes_core.store._writable import check_permissions, check_writable
from cassettes_core.store._yaml import MAX_DEPTH, MAX_INT_DIGITS, depth_of, first_comment_line
from cassettes_core.store._yaml import dump as dump_yaml
from cassettes_core.store._yaml import load as load_yaml

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
