"""The cassette store: the file on disk and the in-memory cassette read from it.

    from cassettes_core.store import CassetteFile, load_cassette

    cassette = load_cassette("cassettes/test_weather.yaml")   # validated, digests checked
    file = CassetteFile(path, guard=guard)                   # journaled, folded whole, locked

This package owns every byte of a cassette, in and out; everyone else (the recorder, the
``cassettes`` command, ``cassette-refresh``) goes through the names below, never through a
``_`` module, and nothing outside it parses cassette YAML. Inside: ``_yaml`` (the only YAML
loader and dumper), ``_format`` (a document checked into interactions, and rendered back),
``_file`` (the file and its journal: read, locked, written whole), ``_manifest`` (versions
and drift), ``_cassette`` (the digest index and play state) and ``_cache`` (the parsed form
of unchanged files). It imports only the core's model, request, errors, digest and version,
never the recorder, the transport or the secret guard (which it is handed, as a
``WriteGuard``).
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
