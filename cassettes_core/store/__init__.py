"""The cassette store: the file on disk and the in-memory cassette read from it.

    from cassettes_core.store import CassetteFile, load_cassette

    cassette = load_cassette("cassettes/test_weather.yaml")   # validated, digests checked
    file = CassetteFile(path, guard=guard)                   # journaled, folded whole, locked

Everything outside goes through the names below, never a ``_`` module, and nothing outside
parses cassette YAML: ``_yaml`` (the only loader and dumper), ``_format`` (document ⇄
interactions), ``_file`` (the file and its journal, locked, written whole), ``_manifest``,
``_cassette`` (the digest index and play state), ``_cache`` (parsed unchanged files).
"""

from __future__ import annotations

from cassettes_core.digest import MAX_DEPTH, MAX_INT_DIGITS, depth_of
from cassettes_core.store._cassette import Cassette, Lookup
from cassettes_core.store._file import (
    BOOKKEEPING_KEYS,
    CassetteFile,
    Snapshot,
    WriteGuard,
    atomic_write,
    check_permissions,
    check_writable,
    journal_path,
    load_cassette,
    lock_for,
    locked,
    read_document,
    read_snapshot,
    read_text,
    rehash,
    require_regular_file,
)
from cassettes_core.store._format import (
    check_document,
    dump_yaml,
    first_comment_line,
    load_plain_yaml,
    load_yaml,
    parse_interaction,
    parse_yaml,
    render,
)
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

__all__ = [
    "BOOKKEEPING_KEYS",
    "MAX_DEPTH",
    "MAX_INT_DIGITS",
    "SESSION_DRIFT_POLICIES",
    "Cassette",
    "CassetteFile",
    "CassetteVersionWarning",
    "DriftPolicy",
    "Lookup",
    "Manifest",
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
    "journal_path",
    "load_cassette",
    "load_plain_yaml",
    "load_yaml",
    "lock_for",
    "locked",
    "parse_interaction",
    "parse_yaml",
    "read_document",
    "read_snapshot",
    "read_text",
    "rehash",
    "render",
    "require_regular_file",
    "version_drift",
]
